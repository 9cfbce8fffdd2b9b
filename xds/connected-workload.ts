import type { ConnectedWorkload } from '../controllers/index.js';
import type { XdsConnection } from './xds-connection.js';

/**
 * What WorkloadEntry auto-registration reads of a stream's proxy: node metadata NAMESPACE,
 * AUTO_REGISTER_GROUP, WORKLOAD_ENTRY, NETWORK, LABELS and PROXY_CONFIG (a readinessProbe means the
 * agent reports health), the node's locality, the stream's verified identity and its start.
 */
export function connectedWorkloadOf(con: XdsConnection): ConnectedWorkload {
  const { proxy } = con;
  const raw = proxy.metadata.raw;
  const text = (key: string): string | undefined => {
    const value = raw[key];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const proxyConfig = raw['PROXY_CONFIG'];
  const hasReadinessProbe =
    typeof proxyConfig === 'object' && proxyConfig !== null && !Array.isArray(proxyConfig) && typeof proxyConfig['readinessProbe'] === 'object';
  const locality = proxy.locality ? [proxy.locality.region, proxy.locality.zone, proxy.locality.subZone].join('/').replace(/\/+$/, '') : '';
  const group = text('AUTO_REGISTER_GROUP');
  const entry = text('WORKLOAD_ENTRY');
  const network = text('NETWORK');
  return {
    proxyId: proxy.id,
    namespace: proxy.metadata.namespace ?? proxy.configNamespace,
    ips: proxy.ipAddresses,
    labels: proxy.metadata.labels,
    hasReadinessProbe,
    connectedAt: con.connectedAt,
    ...(group ? { autoRegisterGroup: group } : {}),
    ...(entry ? { workloadEntry: entry } : {}),
    ...(network ? { network } : {}),
    ...(locality ? { locality } : {}),
    ...(proxy.verifiedIdentity ? { verifiedIdentity: proxy.verifiedIdentity } : {}),
  };
}
