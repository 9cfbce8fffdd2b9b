export const SECURITY_GROUP = 'security.mesh.io';
export const NETWORKING_GROUP = 'networking.mesh.io';
/** The storage version of the security kinds: what the daemon watches and the mesh writes. */
export const SECURITY_VERSION = 'v1beta1';
/** The storage version of the networking kinds. */
export const NETWORKING_VERSION = 'v1alpha3';
export const SECURITY_API_VERSION = `${SECURITY_GROUP}/${SECURITY_VERSION}` as const;
export const NETWORKING_API_VERSION = `${NETWORKING_GROUP}/${NETWORKING_VERSION}` as const;
/** Every version served, as the reference's CRDs serve them: one schema, converted by renaming alone. */
export const SECURITY_VERSIONS = ['v1beta1', 'v1'] as const;
export const NETWORKING_VERSIONS = ['v1alpha3', 'v1beta1', 'v1'] as const;
export const SECURITY_API_VERSIONS = [`${SECURITY_GROUP}/v1beta1`, `${SECURITY_GROUP}/v1`] as const;
export const NETWORKING_API_VERSIONS = [`${NETWORKING_GROUP}/v1alpha3`, `${NETWORKING_GROUP}/v1beta1`, `${NETWORKING_GROUP}/v1`] as const;

export type KindName =
  | 'PeerAuthentication'
  | 'RequestAuthentication'
  | 'AuthorizationPolicy'
  | 'DestinationRule'
  | 'Gateway'
  | 'VirtualService'
  | 'ServiceEntry'
  | 'WorkloadEntry'
  | 'WorkloadGroup';

export type KindInfo = {
  readonly group: string;
  /** The storage version. */
  readonly version: string;
  /** Every version served, the storage version among them. */
  readonly versions: readonly string[];
  readonly kind: KindName;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly namespaced: true;
};

const SECURITY_CATEGORIES = ['mesh-io', 'security-mesh-io'] as const;
const NETWORKING_CATEGORIES = ['mesh-io', 'networking-mesh-io'] as const;

/** The policy kinds users apply, with the names the CRD manifests and `kubectl` use. */
export const KINDS: { readonly [K in KindName]: KindInfo & { readonly kind: K } } = {
  PeerAuthentication: {
    group: SECURITY_GROUP,
    version: SECURITY_VERSION,
    versions: SECURITY_VERSIONS,
    kind: 'PeerAuthentication',
    plural: 'peerauthentications',
    singular: 'peerauthentication',
    shortNames: ['pa'],
    categories: SECURITY_CATEGORIES,
    namespaced: true,
  },
  RequestAuthentication: {
    group: SECURITY_GROUP,
    version: SECURITY_VERSION,
    versions: SECURITY_VERSIONS,
    kind: 'RequestAuthentication',
    plural: 'requestauthentications',
    singular: 'requestauthentication',
    shortNames: ['ra'],
    categories: SECURITY_CATEGORIES,
    namespaced: true,
  },
  AuthorizationPolicy: {
    group: SECURITY_GROUP,
    version: SECURITY_VERSION,
    versions: SECURITY_VERSIONS,
    kind: 'AuthorizationPolicy',
    plural: 'authorizationpolicies',
    singular: 'authorizationpolicy',
    shortNames: ['ap'],
    categories: SECURITY_CATEGORIES,
    namespaced: true,
  },
  DestinationRule: {
    group: NETWORKING_GROUP,
    version: NETWORKING_VERSION,
    versions: NETWORKING_VERSIONS,
    kind: 'DestinationRule',
    plural: 'destinationrules',
    singular: 'destinationrule',
    shortNames: ['dr'],
    categories: NETWORKING_CATEGORIES,
    namespaced: true,
  },
  Gateway: {
    group: NETWORKING_GROUP,
    version: NETWORKING_VERSION,
    versions: NETWORKING_VERSIONS,
    kind: 'Gateway',
    plural: 'gateways',
    singular: 'gateway',
    shortNames: ['gw'],
    categories: NETWORKING_CATEGORIES,
    namespaced: true,
  },
  VirtualService: {
    group: NETWORKING_GROUP,
    version: NETWORKING_VERSION,
    versions: NETWORKING_VERSIONS,
    kind: 'VirtualService',
    plural: 'virtualservices',
    singular: 'virtualservice',
    shortNames: ['vs'],
    categories: NETWORKING_CATEGORIES,
    namespaced: true,
  },
  ServiceEntry: {
    group: NETWORKING_GROUP,
    version: NETWORKING_VERSION,
    versions: NETWORKING_VERSIONS,
    kind: 'ServiceEntry',
    plural: 'serviceentries',
    singular: 'serviceentry',
    shortNames: ['se'],
    categories: NETWORKING_CATEGORIES,
    namespaced: true,
  },
  WorkloadEntry: {
    group: NETWORKING_GROUP,
    version: NETWORKING_VERSION,
    versions: NETWORKING_VERSIONS,
    kind: 'WorkloadEntry',
    plural: 'workloadentries',
    singular: 'workloadentry',
    shortNames: ['we'],
    categories: NETWORKING_CATEGORIES,
    namespaced: true,
  },
  WorkloadGroup: {
    group: NETWORKING_GROUP,
    version: NETWORKING_VERSION,
    versions: NETWORKING_VERSIONS,
    kind: 'WorkloadGroup',
    plural: 'workloadgroups',
    singular: 'workloadgroup',
    shortNames: ['wg'],
    categories: NETWORKING_CATEGORIES,
    namespaced: true,
  },
};

export const KIND_NAMES: readonly KindName[] = Object.keys(KINDS) as KindName[];

/**
 * Kinds the mesh accepts, validates, stores and reports status on, but does not translate to proxy
 * configuration yet: a change to one pushes nothing, and the push model leaves them out.
 */
export const UNTRANSLATED_KINDS: ReadonlySet<KindName> = new Set<KindName>(['WorkloadGroup']);

/** `group/version` of a kind's storage version, as written in `apiVersion`. */
export function apiVersionOf(kind: KindName): string {
  const info = KINDS[kind];
  return `${info.group}/${info.version}`;
}

/** Every `group/version` a kind may be written with. */
export function servedApiVersionsOf(kind: KindName): readonly string[] {
  const info = KINDS[kind];
  return info.versions.map((version) => `${info.group}/${version}`);
}
