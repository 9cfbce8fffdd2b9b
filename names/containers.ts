/** The containers injection adds to a pod. */
export const PROXY_CONTAINER = 'mesh-proxy';
export const INIT_CONTAINER = 'mesh-init';
export const VALIDATION_CONTAINER = 'mesh-validation';
export const CORE_DUMP_CONTAINER = 'enable-core-dump';
