/**
 * The type URL of the agent's health reports on the proxy's xDS stream: a DiscoveryRequest of
 * this type without `error_detail` says the workload is healthy; with `error_detail` (code 13,
 * Internal) it says why not. The daemon reads it before anything else on the stream.
 */
export const HEALTH_INFORMATION_TYPE = 'type.googleapis.com/mesh.v1.HealthInformation';
