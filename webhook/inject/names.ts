/** The annotations, labels, containers and env names injection reads and writes. */
export const ANNOTATIONS = {
  inject: 'sidecar.mesh.io/inject',
  status: 'sidecar.mesh.io/status',
  overrides: 'proxy.mesh.io/overrides',
  proxyConfig: 'proxy.mesh.io/config',
  templates: 'inject.mesh.io/templates',
  interceptionMode: 'sidecar.mesh.io/interceptionMode',
  enableCoreDump: 'sidecar.mesh.io/enableCoreDump',
  rewriteAppHTTPProbers: 'sidecar.mesh.io/rewriteAppHTTPProbers',
  proxyCPU: 'sidecar.mesh.io/proxyCPU',
  proxyCPULimit: 'sidecar.mesh.io/proxyCPULimit',
  statusPort: 'status.sidecar.mesh.io/port',
  readinessInitialDelaySeconds: 'readiness.status.sidecar.mesh.io/initialDelaySeconds',
  readinessPeriodSeconds: 'readiness.status.sidecar.mesh.io/periodSeconds',
  readinessFailureThreshold: 'readiness.status.sidecar.mesh.io/failureThreshold',
  includeOutboundIPRanges: 'traffic.sidecar.mesh.io/includeOutboundIPRanges',
  excludeOutboundIPRanges: 'traffic.sidecar.mesh.io/excludeOutboundIPRanges',
  includeInboundPorts: 'traffic.sidecar.mesh.io/includeInboundPorts',
  excludeInboundPorts: 'traffic.sidecar.mesh.io/excludeInboundPorts',
  excludeOutboundPorts: 'traffic.sidecar.mesh.io/excludeOutboundPorts',
  mergeMetrics: 'prometheus.mesh.io/merge-metrics',
  defaultContainer: 'kubectl.kubernetes.io/default-container',
  defaultLogsContainer: 'kubectl.kubernetes.io/default-logs-container',
  prometheusScrape: 'prometheus.io/scrape',
  prometheusPath: 'prometheus.io/path',
  prometheusPort: 'prometheus.io/port',
} as const;

export const LABELS = {
  inject: 'sidecar.mesh.io/inject',
  tlsMode: 'security.mesh.io/tlsMode',
  canonicalName: 'service.mesh.io/canonical-name',
  canonicalRevision: 'service.mesh.io/canonical-revision',
  network: 'topology.mesh.io/network',
  revision: 'mesh.io/rev',
  /** On a revision tag's webhook configurations: the tag. */
  tag: 'mesh.io/tag',
  /** On a namespace: `enabled` asks the default revision to inject its pods. */
  namespaceInjection: 'mesh-injection',
} as const;

export const PROXY_CONTAINER = 'mesh-proxy';
export const INIT_CONTAINER = 'mesh-init';
export const VALIDATION_CONTAINER = 'mesh-validation';
export const CORE_DUMP_CONTAINER = 'enable-core-dump';

export const ENV = {
  appProbers: 'MESH_ORCH_APP_PROBERS',
  prometheusAnnotations: 'MESH_PROMETHEUS_ANNOTATIONS',
  clusterId: 'MESH_META_CLUSTER_ID',
  network: 'MESH_META_NETWORK',
} as const;

/** Namespaces whose pods are never injected: the cluster's own. */
export const IGNORED_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease', 'local-path-storage'];

/** Where Prometheus scrapes the merged metrics of the app and the proxy on the status port. */
export const MERGED_METRICS_PATH = '/stats/prometheus';
