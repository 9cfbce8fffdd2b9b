import type { GatewayServer } from '../../crds/index.js';
import type { Proxy } from '../proxy.js';
import { ROOT_SECRET, sdsSecretConfig, WORKLOAD_SECRET } from '../security/sds-secret-config.js';
import { gatewayLabelsOf, gatewayServersByPort, httpsRouteName, serverKind, type GatewayServerEntry } from './gateway-config.js';
import { ADS_SOURCE, httpConnectionManager, pathNormalizationOptions, ROUTER_FILTER } from './http-connection-manager.js';
import { workloadOfProxy } from './proxy-workload.js';
import type { PushContext } from './push-context.js';
import { NO_SECURITY_FILTERS, type SecurityFilters } from './security-filters.js';
import type { ListenerResource } from './sidecar-listeners.js';

export interface BuildGatewayListenersOptions {
  /** jwt_authn and RBAC in every HTTP connection manager of the gateway. */
  readonly securityFilters?: SecurityFilters;
}

const TLS_PARAMS = { tls_minimum_protocol_version: 'TLSv1_2', tls_maximum_protocol_version: 'TLSv1_3' };

function serverTls(server: GatewayServer): object {
  const tls = server.tls ?? {};
  const mutual = tls.mode === 'MUTUAL' || tls.mode === 'MESH_MUTUAL';
  const common: Record<string, unknown> = { tls_params: TLS_PARAMS, alpn_protocols: ['h2', 'http/1.1'] };
  if (tls.mode === 'MESH_MUTUAL') {
    common['tls_certificate_sds_secret_configs'] = [sdsSecretConfig(WORKLOAD_SECRET)];
    common['combined_validation_context'] = { default_validation_context: {}, validation_context_sds_secret_config: sdsSecretConfig(ROOT_SECRET) };
  } else if (tls.credentialName) {
    common['tls_certificate_sds_secret_configs'] = [sdsSecretConfig(tls.credentialName)];
    if (mutual) common['combined_validation_context'] = { default_validation_context: {}, validation_context_sds_secret_config: sdsSecretConfig(`${tls.credentialName}-cacert`) };
  } else {
    if (tls.serverCertificate && tls.privateKey) common['tls_certificates'] = [{ certificate_chain: { filename: tls.serverCertificate }, private_key: { filename: tls.privateKey } }];
    if (mutual && tls.caCertificates) common['validation_context'] = { trusted_ca: { filename: tls.caCertificates }, ...(tls.subjectAltNames ? { match_subject_alt_names: tls.subjectAltNames.map((san) => ({ exact: san })) } : {}) };
  }
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext', ...(mutual ? { require_client_certificate: { value: true } } : {}), common_tls_context: common },
  };
}

function hcm(push: PushContext, port: number, routeName: string, httpFilters: readonly object[]): object {
  return httpConnectionManager({
    stat_prefix: `outbound_0.0.0.0_${port}`,
    rds: { route_config_name: routeName, config_source: ADS_SOURCE },
    http_filters: [...httpFilters, ROUTER_FILTER],
    // The edge: the client address is the peer's, XFCC from outside is replaced by what this hop sees.
    use_remote_address: { value: true },
    forward_client_cert_details: 'SANITIZE_SET',
    set_current_client_cert_details: { subject: { value: true }, dns: true, uri: true },
    ...pathNormalizationOptions(push.meshConfig),
  });
}

/**
 * The listeners of a gateway: one `0.0.0.0_<port>` per server port of the Gateways selecting
 * it, bound for real; HTTP servers share a chain routed by RDS `http.<port>`, terminating HTTPS
 * servers get a chain per server matched on SNI with RDS `https.<port>.<name>.<gateway>.<ns>`.
 * The policy filters go into every HTTP connection manager. Passthrough and TCP servers are not
 * built (not implemented).
 */
export function buildGatewayListeners(proxy: Proxy, push: PushContext, options: BuildGatewayListenersOptions = {}): ListenerResource[] {
  const security = options.securityFilters ?? NO_SECURITY_FILTERS;
  const workload = workloadOfProxy(push, proxy);
  const labels = gatewayLabelsOf(push, proxy);
  const namespace = workload?.namespace ?? proxy.configNamespace;
  const listeners: ListenerResource[] = [];
  for (const [port, entries] of [...gatewayServersByPort(push, proxy).entries()].sort(([a], [b]) => a - b)) {
    const filters = security.http({ proxy, push, ...(workload ? { workload } : {}), namespace, labels, port, kind: 'gateway' });
    const chains: object[] = [];
    const https = entries.filter((entry) => serverKind(entry.server) === 'https');
    for (const entry of https) {
      const names = entry.server.hosts.map((host) => host.slice(host.indexOf('/') + 1)).filter((host) => host !== '*');
      chains.push({
        name: httpsRouteName(entry),
        filter_chain_match: names.length > 0 ? { server_names: names } : {},
        transport_socket: serverTls(entry.server),
        filters: [hcm(push, port, httpsRouteName(entry), filters)],
      });
    }
    if (entries.some((entry: GatewayServerEntry) => serverKind(entry.server) === 'http')) chains.push({ name: `http.${port}`, filters: [hcm(push, port, `http.${port}`, filters)] });
    if (chains.length === 0) continue;
    listeners.push({
      name: `0.0.0.0_${port}`,
      address: { socket_address: { address: '0.0.0.0', port_value: port } },
      traffic_direction: 'OUTBOUND',
      listener_filters: https.length > 0 ? [{ name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' } }] : [],
      filter_chains: chains,
    });
  }
  return listeners;
}
