// The mesh's shared names, the lowest package of all (it imports no other package of ours, and
// every package may import it): the Kubernetes labels and annotations the mesh reads and writes,
// the containers injection adds, the namespaces it leaves alone; the names of the mesh's own
// objects per revision; the one label-selector matcher;
// the one object and config key formatter.
export {
  ALWAYS_REJECT_ANNOTATION,
  ANALYZE_SUPPRESS_ANNOTATION,
  ANNOTATIONS,
  DEPRECATED_ANNOTATIONS,
  DRY_RUN_ANNOTATION,
  IGNORE_RECONCILE_ANNOTATION,
  INSTALLED_VERSION_ANNOTATION,
  WORKLOAD_ENTRY_ANNOTATIONS,
} from './annotations.js';
export { formatConfigKey, formatObjectKey, type NamespacedName } from './config-key.js';
export { CORE_DUMP_CONTAINER, INIT_CONTAINER, PROXY_CONTAINER, VALIDATION_CONTAINER } from './containers.js';
export { LABELS } from './labels.js';
export {
  labelsMatch,
  selectorMatches,
  type LabelSelector,
  type LabelSelectorOperator,
  type LabelSelectorRequirement,
  type UncheckedLabelSelector,
} from './label-selector.js';
export { IGNORED_NAMESPACES } from './namespaces.js';
export {
  DAEMON_CONTAINER,
  DAEMON_NAME,
  DAEMON_POD_SELECTOR,
  DEFAULT_REVISION,
  INJECTOR_CONFIG_MAP_NAME,
  MESH_CONFIG_MAP_NAME,
  revisionLabelValue,
  revisionedName,
} from './service-names.js';
