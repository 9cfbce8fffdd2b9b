import type { Analyzer } from './analyzer.js';
import { ANNOTATION_ANALYZERS } from './analyzers/annotation-analyzers.js';
import { jwksUriAnalyzer } from './analyzers/jwks-uri-analyzer.js';
import { blockedCidrsAnalyzer } from './analyzers/blocked-cidrs-analyzer.js';
import { authorizationPoliciesAnalyzer, extensionProviderAnalyzer, serviceAccountAnalyzer } from './analyzers/authorization-policies-analyzer.js';
import { conflictingMeshGatewayHostsAnalyzer } from './analyzers/conflicting-mesh-gateway-hosts-analyzer.js';
import { certificateAnalyzer, conflictingGatewayAnalyzer } from './analyzers/gateway-config-analyzers.js';
import { gatewaySecretAnalyzer, ingressGatewayPortAnalyzer } from './analyzers/gateway-workload-analyzers.js';
import { imageAnalyzer, injectionAnalyzer, revisionAnalyzer } from './analyzers/injection-analyzers.js';
import { imageAutoAnalyzer } from './analyzers/image-auto-analyzer.js';
import { denyHttpOnTcpAnalyzer } from './analyzers/deny-http-on-tcp-analyzer.js';
import { caCertificateAnalyzer, subsetSelectPodAnalyzer } from './analyzers/destination-rule-analyzers.js';
import { mtlsAnalyzer, workloadMtlsAnalyzer } from './analyzers/mtls-analyzers.js';
import { portLevelMtlsAnalyzer } from './analyzers/port-level-mtls-analyzer.js';
import { SCHEMA_ANALYZERS } from './analyzers/schema-analyzers.js';
import { destinationHostAnalyzer } from './analyzers/virtual-service-destination-host-analyzer.js';
import { virtualServiceGatewayAnalyzer } from './analyzers/virtual-service-gateway-analyzer.js';
import { regexAnalyzer } from './analyzers/virtual-service-regex-analyzer.js';
import { jwtClaimRouteAnalyzer } from './analyzers/virtual-service-jwt-claim-route-analyzer.js';
import { destinationRuleAnalyzer } from './analyzers/virtual-service-subset-analyzer.js';
import { webhookAnalyzer } from './analyzers/webhook-analyzer.js';
import { applicationUidAnalyzer, deploymentApplicationUidAnalyzer, multiServiceAnalyzer, portNameAnalyzer } from './analyzers/workload-analyzers.js';
import { WORKLOAD_SELECTOR_ANALYZERS } from './analyzers/workload-selector-analyzers.js';

/** Every analyzer, in the order `-L` lists them (by name). */
import { serviceEntryAnalyzer } from './analyzers/service-entry-analyzer.js';

export const ALL_ANALYZERS: readonly Analyzer[] = [
  ...SCHEMA_ANALYZERS,
  ...ANNOTATION_ANALYZERS,
  applicationUidAnalyzer,
  deploymentApplicationUidAnalyzer,
  multiServiceAnalyzer,
  portNameAnalyzer,
  ...WORKLOAD_SELECTOR_ANALYZERS,
  authorizationPoliciesAnalyzer,
  blockedCidrsAnalyzer,
  certificateAnalyzer,
  conflictingGatewayAnalyzer,
  gatewaySecretAnalyzer,
  imageAnalyzer,
  imageAutoAnalyzer,
  ingressGatewayPortAnalyzer,
  injectionAnalyzer,
  revisionAnalyzer,
  denyHttpOnTcpAnalyzer,
  caCertificateAnalyzer,
  subsetSelectPodAnalyzer,
  extensionProviderAnalyzer,
  jwksUriAnalyzer,
  mtlsAnalyzer,
  portLevelMtlsAnalyzer,
  serviceAccountAnalyzer,
  serviceEntryAnalyzer,
  workloadMtlsAnalyzer,
  conflictingMeshGatewayHostsAnalyzer,
  destinationHostAnalyzer,
  destinationRuleAnalyzer,
  regexAnalyzer,
  jwtClaimRouteAnalyzer,
  virtualServiceGatewayAnalyzer,
  webhookAnalyzer,
].sort((a, b) => (a.name < b.name ? -1 : 1));
