import { ANALYZE_SUPPRESS_ANNOTATION, ANNOTATIONS, DEPRECATED_ANNOTATIONS, DRY_RUN_ANNOTATION, LABELS } from '../../names/index.js';

/** How settled the feature behind an annotation is, as the reference's annotation catalogue says. */
export type FeatureStatus = 'Alpha' | 'Beta' | 'Stable';

export interface AnnotationInfo {
  readonly status: FeatureStatus;
  /** The kinds the annotation belongs on; `Any` for every kind. */
  readonly kinds: readonly string[];
  /** When deprecated: what the message adds after "has been deprecated" (often nothing). */
  readonly deprecated?: string;
}

const pod = (status: FeatureStatus = 'Alpha', deprecated?: string): AnnotationInfo => ({
  status,
  kinds: ['Pod'],
  ...(deprecated !== undefined ? { deprecated } : {}),
});
const on = (kinds: readonly string[], status: FeatureStatus = 'Alpha'): AnnotationInfo => ({ status, kinds });

/**
 * Every annotation of the reference's catalogue (istio.io/api `annotation/annotations.yaml`), its
 * domain ours (`sidecar.istio.io/…` → `sidecar.mesh.io/…`), with the kinds it belongs on, its
 * status and whether it is deprecated; then the few that are ours alone. An entry without a status
 * in the reference's catalogue is Alpha, as its generated code makes it.
 */
export const ANNOTATION_CATALOGUE: ReadonlyMap<string, AnnotationInfo> = new Map<string, AnnotationInfo>([
  ['alpha.mesh.io/canonical-serviceaccounts', { ...on(['Service']), deprecated: '' }],
  ['alpha.mesh.io/kubernetes-serviceaccounts', { ...on(['Service']), deprecated: '' }],
  ['ambient.mesh.io/bypass-inbound-capture', pod()],
  ['ambient.mesh.io/dns-capture', pod()],
  ['ambient.mesh.io/redirection', pod('Beta')],
  ['ambient.mesh.io/waypoint-inbound-binding', on(['GatewayClass', 'Gateway'])],
  [ANALYZE_SUPPRESS_ANNOTATION, on(['Any'])],
  ['gateway.mesh.io/controller-version', on(['Any'])],
  ['gateway.mesh.io/name-override', on(['Gateway'])],
  ['gateway.mesh.io/service-account', on(['Gateway'])],
  [ANNOTATIONS.templates, pod()],
  ['mesh.io/autoRegistrationGroup', on(['WorkloadEntry'])],
  ['mesh.io/connectedAt', on(['WorkloadEntry'])],
  ['mesh.io/disconnectedAt', on(['WorkloadEntry'])],
  [DRY_RUN_ANNOTATION, on(['AuthorizationPolicy'])],
  ['mesh.io/reroute-virtual-interfaces', pod()],
  [LABELS.revision, pod()],
  ['mesh.io/use-waypoint-canary-weight', on(['Service', 'ServiceEntry', 'Namespace'])],
  ['mesh.io/workloadController', on(['WorkloadEntry'])],
  ['kubernetes.io/ingress.class', on(['Ingress'], 'Stable')],
  ['networking.mesh.io/exportTo', on(['Service'])],
  ['networking.mesh.io/service-type', on(['Gateway'])],
  ['networking.mesh.io/traffic-distribution', on(['Namespace', 'Service', 'ServiceEntry'])],
  [ANNOTATIONS.mergeMetrics, pod()],
  [ANNOTATIONS.proxyConfig, pod('Beta')],
  [ANNOTATIONS.overrides, pod()],
  // Not deprecated in the reference; ours reads the probes of the pod itself.
  [DEPRECATED_ANNOTATIONS.readinessApplicationPorts, pod('Alpha', ': the agent reads the probes of the pod itself')],
  [ANNOTATIONS.readinessFailureThreshold, pod()],
  [ANNOTATIONS.readinessInitialDelaySeconds, pod()],
  [ANNOTATIONS.readinessPeriodSeconds, pod()],
  ['sidecar.mesh.io/agentLogLevel', pod()],
  ['sidecar.mesh.io/bootstrapOverride', pod()],
  ['sidecar.mesh.io/componentLogLevel', pod()],
  [DEPRECATED_ANNOTATIONS.discoveryAddress, pod('Alpha', ` in favor of discoveryAddress in ${ANNOTATIONS.proxyConfig}`)],
  ['sidecar.mesh.io/extraStatTags', pod('Alpha', '')],
  [ANNOTATIONS.inject, pod('Beta', ` in favor of the "${LABELS.inject}" label`)],
  [ANNOTATIONS.interceptionMode, pod()],
  ['sidecar.mesh.io/logLevel', pod()],
  ['sidecar.mesh.io/nativeSidecar', pod()],
  [ANNOTATIONS.proxyCPU, pod()],
  [ANNOTATIONS.proxyCPULimit, pod()],
  [ANNOTATIONS.proxyImage, pod()],
  [ANNOTATIONS.proxyImageType, pod()],
  [ANNOTATIONS.proxyMemory, pod()],
  [ANNOTATIONS.proxyMemoryLimit, pod()],
  [ANNOTATIONS.rewriteAppHTTPProbers, pod()],
  ['sidecar.mesh.io/statsCompression', pod('Alpha', '')],
  ['sidecar.mesh.io/statsEvictionInterval', pod()],
  ['sidecar.mesh.io/statsFlushInterval', pod()],
  ['sidecar.mesh.io/statsHistogramBins', pod()],
  ['sidecar.mesh.io/statsHistogramBuckets', pod()],
  ['sidecar.mesh.io/statsInclusionPrefixes', pod('Alpha', '')],
  ['sidecar.mesh.io/statsInclusionRegexps', pod('Alpha', '')],
  ['sidecar.mesh.io/statsInclusionSuffixes', pod('Alpha', '')],
  [ANNOTATIONS.status, pod()],
  ['sidecar.mesh.io/userVolume', pod()],
  ['sidecar.mesh.io/userVolumeMount', pod()],
  [ANNOTATIONS.statusPort, pod()],
  ['topology.mesh.io/controlPlaneClusters', on(['Namespace'])],
  ['traffic.mesh.io/nodeSelector', on(['Service'], 'Stable')],
  [ANNOTATIONS.excludeInboundPorts, pod()],
  ['traffic.sidecar.mesh.io/excludeInterfaces', pod()],
  [ANNOTATIONS.excludeOutboundIPRanges, pod()],
  [ANNOTATIONS.excludeOutboundPorts, pod()],
  [ANNOTATIONS.includeInboundPorts, pod()],
  [ANNOTATIONS.includeOutboundIPRanges, pod()],
  ['traffic.sidecar.mesh.io/includeOutboundPorts', pod()],
  ['traffic.sidecar.mesh.io/kubevirtInterfaces', pod('Alpha', '')],
  // Ours alone: the injector still honours it (the reference dropped it from its catalogue).
  [ANNOTATIONS.enableCoreDump, pod()],
]);

/** Never reported by the annotation analyzers, wherever they are: the injector, the gateway controller or revisions set them. */
export const ALWAYS_IGNORED_ANNOTATIONS: ReadonlySet<string> = new Set([ANNOTATIONS.status, 'gateway.mesh.io/controller-version', LABELS.revision]);

const MESH_DOMAIN = /(^|\.)mesh\.io$/;

/** Whether an annotation is the mesh's to judge: a `mesh.io` domain, or `kubernetes.io/ingress.class` that the reference documents. */
export function isMeshAnnotation(key: string): boolean {
  if (key === 'kubernetes.io/ingress.class') return true;
  return key.includes('/') && MESH_DOMAIN.test(key.slice(0, key.indexOf('/')));
}
