/**
 * The annotations a pod carries for injection and the proxy: what the injector reads and writes,
 * and what `meshctl analyze` knows as pod annotations (every `mesh.io` one here belongs on a Pod).
 */
export const ANNOTATIONS = {
  inject: 'sidecar.mesh.io/inject',
  status: 'sidecar.mesh.io/status',
  overrides: 'proxy.mesh.io/overrides',
  proxyConfig: 'proxy.mesh.io/config',
  templates: 'inject.mesh.io/templates',
  interceptionMode: 'sidecar.mesh.io/interceptionMode',
  enableCoreDump: 'sidecar.mesh.io/enableCoreDump',
  rewriteAppHTTPProbers: 'sidecar.mesh.io/rewriteAppHTTPProbers',
  proxyImage: 'sidecar.mesh.io/proxyImage',
  proxyImageType: 'sidecar.mesh.io/proxyImageType',
  proxyCPU: 'sidecar.mesh.io/proxyCPU',
  proxyCPULimit: 'sidecar.mesh.io/proxyCPULimit',
  proxyMemory: 'sidecar.mesh.io/proxyMemory',
  proxyMemoryLimit: 'sidecar.mesh.io/proxyMemoryLimit',
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

/** Pod annotations of older versions, still recognised (and reported as deprecated) by analysis. */
export const DEPRECATED_ANNOTATIONS = {
  readinessApplicationPorts: 'readiness.status.sidecar.mesh.io/applicationPorts',
  discoveryAddress: 'sidecar.mesh.io/discoveryAddress',
} as const;

/** On any mesh resource: the analysis codes (`MSH0101,MSH0102` or `*`) not to report for it. */
export const ANALYZE_SUPPRESS_ANNOTATION = 'galley.mesh.io/analyze-suppress';

/** On an AuthorizationPolicy: `true` puts it into `shadow_rules`: evaluated and counted, never enforced. */
export const DRY_RUN_ANNOTATION = 'mesh.io/dry-run';

/** Marks the probe object the webhook configuration controller sends: rejected without a log line. */
export const ALWAYS_REJECT_ANNOTATION = 'mesh.io/always-reject';

/** On an installation record: the meshctl version that installed it. */
export const INSTALLED_VERSION_ANNOTATION = 'install.mesh.io/version';

/** On an installation record: the install operator leaves it alone (meshctl, not the operator, installed it). */
export const IGNORE_RECONCILE_ANNOTATION = 'install.mesh.io/ignoreReconcile';

/**
 * On a WorkloadEntry the daemon registered or health-checks (`pilot/pkg/autoregistration`): the
 * WorkloadGroup it was made from, the daemon instance holding the workload's stream, when the
 * stream opened and closed (RFC 3339 with nanoseconds), and whether the agent reports health.
 */
export const WORKLOAD_ENTRY_ANNOTATIONS = {
  autoRegistrationGroup: 'mesh.io/autoRegistrationGroup',
  workloadController: 'mesh.io/workloadController',
  connectedAt: 'mesh.io/connectedAt',
  disconnectedAt: 'mesh.io/disconnectedAt',
  healthChecksEnabled: 'proxy.mesh.io/health-checks-enabled',
} as const;
