// pilot-agent: runs beside every proxy. Its identity and bootstrap (proxy/), certificates and
// their rotation (secrets/), the SDS server (sds/), the xDS proxy and debug tap (xds-proxy/), the
// capture rules (iptables/), and the supervision of the data plane process.
export * from './iptables/index.js';
export { parseAppProbers } from './proxy/app-probers.js';
export { dataPlaneLaunch } from './proxy/data-plane-launch.js';
export { newDataPlaneProcess } from './proxy/data-plane-process.js';
export { buildEnvoyBootstrap, mergeBootstrap } from './proxy/envoy-bootstrap.js';
export { buildGrpcBootstrap } from './proxy/grpc-bootstrap.js';
export { buildProxyIdentity, loadProxyConfig, type ProxyType } from './proxy/proxy-identity.js';
export { newStatusServer } from './proxy/status-server.js';
export { newSdsServer } from './sds/sds-server.js';
export { credentialFetcher } from './secrets/credential-fetcher.js';
export { newFileMountedCertificates } from './secrets/file-mounted-certificates.js';
export { newAgentTrustBundle, staticIdentity } from './secrets/trust-bundle.js';
export { newWorkloadCertificates, provisionedCertificateFiles } from './secrets/workload-certificates.js';
export { debugTapHost, debugTapInspector, DEBUG_TAP_PORT } from './xds-proxy/debug-tap.js';
export { newXdsProxy } from './xds-proxy/xds-proxy.js';
