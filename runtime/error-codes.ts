/**
 * Every error code of the mesh, in one spelling (kebab-case), grouped by the area that raises it
 * (as fastify's lib/errors.js or jose's errors.ts). A code is never reused for another meaning;
 * add new ones here, to the group of the package that raises them.
 */
export const ERROR_CODES = {
  /** The manager, runnables, settings, logging, metrics and the Kubernetes client layer. */
  runtime: [
    'usage',
    'exit-status',
    'terminal',
    'already-started',
    'already-stopped',
    'stopping',
    'shutdown-timeout',
    'leader-election-lost',
    'leadership-lost',
    'invalid-leader-election',
    'lease-request-timeout',
    'listen-failed',
    'not-listening',
    'invalid-workers',
    'duplicate-health-check',
    'informer-timeout',
    'stopped-before-start',
    'stopped-before-sync',
    'invalid-duration',
    'unknown-setting',
    'unknown-program',
    'metric-not-registered',
    'metric-type-mismatch',
    'invalid-log-level',
    'invalid-log-callers',
    'invalid-scope',
    'unknown-scope',
    'kube-status',
    'kube-bad-response',
    'kube-stream-broken',
    'kube-no-cluster',
    'not-ready',
    'invalid-setting-default',
    'log-write-failed',
  ],
  /** Config sources, the mesh config and the policy API. */
  config: [
    'invalid-mesh-config',
    'config-dir-unreadable',
    'invalid-kind',
    'unknown-kind',
    'parse-pool-closed',
    'workload-group-not-found',
    'workload-entry-not-found',
    'workload-identity-mismatch',
    'workload-entry-write-failed',
  ],
  /** The xDS server and the Envoy plumbing. */
  xds: [
    'invalid-node',
    'invalid-xds-resource',
    'unknown-proto-type',
    'proto-missing',
    'proto-load-failed',
    'stream-closed',
    'unauthenticated',
    'permission-denied',
    'jwks-fetch-failed',
    'invalid-discovery-request',
    'proto-layout-changed',
  ],
  /** The certificate authority and X.509 handling. */
  ca: [
    'csr-malformed',
    'csr-signature',
    'csr-unsupported',
    'ttl-too-long',
    'identity-invalid',
    'ca-material-invalid',
    'ca-store-conflict',
    'ca-unavailable',
    'sign-failed',
    'der',
    'pem',
  ],
  /** The sidecar injector (webhook/inject/): its config, the pod's annotations, the templates. */
  webhook: ['invalid-injector-config', 'invalid-injection-annotation', 'injection-template-not-found', 'injection-template-failed', 'invalid-injection-input'],
  /** The agent and its capture rules. */
  agent: [
    'iptables-command-failed',
    'iptables-validation-failed',
    'resolv-conf-unreadable',
    'credential-fetcher-invalid',
    'app-probers-invalid',
    'readiness-probe-invalid',
    'provisioned-certificate-unreadable',
    'certificate-chain-empty',
    'data-plane-program-missing',
  ],
  /** The embedded data plane. */
  dataplane: ['bootstrap-invalid', 'secret-missing', 'config-rejected', 'rbac-config-invalid', 'ext-authz-config-invalid', 'secret-invalid'],
  /** The API server double (the Kubernetes reason of a failure travels beside the code). */
  apiserverDouble: ['api-status', 'json-patch', 'revision-compacted', 'revision-too-large', 'webhook-call', 'webhook-response-invalid'],
  /** meshctl, and the command trees of every program (cli/). */
  meshctl: [
    'validation-failed',
    'wait-timeout',
    'workload-entry-config-failed',
    'precheck-issues',
    'revision-not-found',
    'port-forward-failed',
    'xds-query-failed',
    'metrics-query-failed',
    'analysis-timeout',
    'authz-explain-failed',
    'bugreport-gather-failed',
    'version-query-failed',
    'webhook-denied',
    'debug-request-failed',
    'external-service-exists',
    'external-service-not-found',
    'external-service-write-failed',
    'mesh-workload-not-found',
    'mesh-workload-update-failed',
    'mesh-system-namespace',
  ],
  /** The installation: rendering the charts. */
  install: ['render-failed', 'install-failed', 'proxy-config-failed', 'pod-not-found', 'verify-failed', 'tag-refused', 'upgrade-refused'],
} as const;

export type MeshErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES][number];
