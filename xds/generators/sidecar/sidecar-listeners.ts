import { isIP } from 'node:net';
import type { Http10Options } from '../http10.js';
import type { DelayedCloseOptions } from '../delayed-close.js';
import type { Service, ServicePort } from '../../../controllers/index.js';
import type { Proxy } from '../../proxy.js';
import { composePeerAuthentication, mtlsModeForPort, type EffectiveMtlsMode } from '../../model/peer-authentication.js';
import { ROOT_SECRET, sdsSecretConfig, WORKLOAD_SECRET } from '../../security/sds-secret-config.js';
import { BLACKHOLE_CLUSTER, PASSTHROUGH_CLUSTER, inboundClusterName, outboundClusterName } from '../../model/cluster-names.js';
import { ADS_SOURCE, httpConnectionManager, pathNormalizationOptions, ROUTER_FILTER, tcpProxy, telemetryFilters } from '../http-connection-manager.js';
import { inboundPortsOf, workloadOfProxy, type InboundPort } from '../proxy-workload.js';
import { visibleServices } from '../../model/service-visibility.js';
import { allocatedAddressesFor, usesAutoAllocation } from '../../model/auto-allocation.js';
import { servicePortKey, type PushContext } from '../../model/push-context.js';
import { NO_SECURITY_FILTERS, type SecurityFilterInput, type SecurityFilters, type TypedFilter } from '../../model/security-filters.js';
import { isHttpRoutable } from '../../model/service-port-protocol.js';
import type { PushFindings } from '../../push/push-findings.js';

/** An Envoy `Listener` in snake_case. */
export type ListenerResource = { readonly name: string } & Readonly<Record<string, unknown>>;

export const VIRTUAL_OUTBOUND = 'virtualOutbound';
export const VIRTUAL_INBOUND = 'virtualInbound';
export const OUTBOUND_PORT = 15001;
export const INBOUND_PORT = 15006;

export interface BuildSidecarListenersOptions extends Http10Options, DelayedCloseOptions {
  /** jwt_authn and RBAC on inbound ports; none without it. */
  readonly securityFilters?: SecurityFilters;
  /** PILOT_SKIP_VALIDATE_TRUST_DOMAIN: accept client certificates of any trust domain. */
  readonly skipValidateTrustDomain?: boolean;
  /**
   * PeerAuthentication applies to inbound ports (default). The `authn` plugin left out of
   * `--plugins` turns it off, as the reference: inbound ports take plain text only.
   */
  readonly peerAuthentication?: boolean;
  /**
   * PILOT_ENABLE_HEADLESS_SERVICE_POD_LISTENERS (default on): a headless Service's TCP port gets an
   * outbound listener per pod address; off, one catch-all chain on `0.0.0.0_<port>`.
   */
  readonly headlessPodListeners?: boolean;
  /**
   * PILOT_SIDECAR_USE_REMOTE_ADDRESS: outbound connection managers take the app's connection as the
   * client (appended to `x-forwarded-for`); inbound ones never do.
   */
  readonly sidecarUseRemoteAddress?: boolean;
}

const TLS_INSPECTOR = {
  name: 'envoy.filters.listener.tls_inspector',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' },
};
const HTTP_INSPECTOR = {
  name: 'envoy.filters.listener.http_inspector',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.http_inspector.v3.HttpInspector' },
};
const ORIGINAL_DST = {
  name: 'envoy.filters.listener.original_dst',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.original_dst.v3.OriginalDst' },
};

function socketAddress(address: string, port: number): object {
  return { socket_address: { address, port_value: port } };
}

/** The DownstreamTlsContext of mesh mutual TLS: the workload certificate, a required client certificate of the trust domain. */
function inboundTls(push: PushContext, options: BuildSidecarListenersOptions, alpn: readonly string[]): object {
  const trustDomains = [push.meshConfig.trustDomain, ...push.meshConfig.trustDomainAliases];
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
      require_client_certificate: { value: true },
      common_tls_context: {
        tls_params: { tls_minimum_protocol_version: 'TLSv1_2', tls_maximum_protocol_version: 'TLSv1_3' },
        alpn_protocols: [...alpn],
        tls_certificate_sds_secret_configs: [sdsSecretConfig(WORKLOAD_SECRET)],
        combined_validation_context: {
          default_validation_context: options.skipValidateTrustDomain
            ? {}
            : { match_subject_alt_names: trustDomains.map((domain) => ({ prefix: `spiffe://${domain}/` })) },
          validation_context_sds_secret_config: sdsSecretConfig(ROOT_SECRET),
        },
      },
    },
  };
}

/** The HCM of an inbound HTTP port: the local app behind `inbound|<port>||`, XFCC appended, paths normalized, the policy filters first. */
function inboundHttpFilters(push: PushContext, port: InboundPort, policy: readonly TypedFilter[]): TypedFilter[] {
  const cluster = inboundClusterName(port.targetPort);
  return [
    httpConnectionManager({
      stat_prefix: `inbound_0.0.0.0_${port.targetPort}`,
      route_config: {
        name: cluster,
        virtual_hosts: [
          {
            name: `inbound|http|${port.servicePort.port}`,
            domains: ['*'],
            routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster, timeout: { seconds: 0 } } }],
          },
        ],
        validate_clusters: { value: false },
      },
      http_filters: [...policy, ...telemetryFilters('inbound'), ROUTER_FILTER],
      forward_client_cert_details: 'APPEND_FORWARD',
      set_current_client_cert_details: { subject: { value: true }, dns: true, uri: true },
      use_remote_address: { value: false },
      ...pathNormalizationOptions(push.meshConfig),
    }),
  ];
}

interface ChainSpec {
  readonly name: string;
  readonly port?: number;
  readonly filters: readonly TypedFilter[];
  readonly alpn: readonly string[];
}

/** The chains of one port (or the catch-all) for its mode: TLS only, both, or plain text only. */
function chainsForMode(push: PushContext, options: BuildSidecarListenersOptions, mode: EffectiveMtlsMode, spec: ChainSpec): object[] {
  const match = (transport: 'tls' | 'raw_buffer'): object => ({
    ...(spec.port !== undefined ? { destination_port: { value: spec.port } } : {}),
    transport_protocol: transport,
  });
  const tls = { name: spec.name, filter_chain_match: match('tls'), transport_socket: inboundTls(push, options, spec.alpn), filters: spec.filters };
  const plain = { name: spec.name, filter_chain_match: match('raw_buffer'), filters: spec.filters };
  if (mode === 'STRICT') return [tls];
  if (mode === 'DISABLE') return [plain];
  return [tls, plain];
}

function virtualInbound(proxy: Proxy, push: PushContext, options: BuildSidecarListenersOptions, findings?: PushFindings): ListenerResource {
  const security = options.securityFilters ?? NO_SECURITY_FILTERS;
  const workload = workloadOfProxy(push, proxy);
  const ports = workload ? inboundPortsOf(push, workload, () => findings?.add('inbound-listener-conflict', proxy.id)) : [];
  // The reference's proxy status: no workload at the proxy's addresses, or one its Services select that is not ready.
  if (!workload) findings?.add('proxy-without-workload', proxy.id);
  else if (ports.length > 0 && !workload.ready) findings?.add('proxy-endpoint-not-ready', proxy.id);
  const bound = new Set(ports.map((port) => port.targetPort));
  const namespace = workload?.namespace ?? proxy.configNamespace;
  const labels = workload?.labels ?? proxy.metadata.labels;
  const composed = composePeerAuthentication({
    rootNamespace: push.rootNamespace,
    policies: push.peerAuthentications.candidates(namespace),
    workload: { namespace, labels },
    boundPorts: (port) => bound.has(port),
  });
  const input = (port: number): SecurityFilterInput => ({ proxy, push, ...(workload ? { workload } : {}), namespace, labels, port, kind: 'sidecar-inbound' });
  const chains: object[] = [];
  for (const port of ports) {
    const mode = options.peerAuthentication === false ? 'DISABLE' : mtlsModeForPort(composed, port.targetPort);
    const http = isHttpRoutable(port.servicePort);
    const cluster = inboundClusterName(port.targetPort);
    const filters = http
      ? inboundHttpFilters(push, port, security.http(input(port.targetPort)))
      : [...security.tcp(input(port.targetPort)), tcpProxy(cluster, cluster)];
    chains.push(
      ...chainsForMode(push, options, mode, { name: `0.0.0.0_${port.targetPort}`, port: port.targetPort, filters, alpn: http ? ['h2', 'http/1.1'] : [] }),
    );
  }
  // Ports no service binds: passed through to the app under the workload-wide mode.
  chains.push(
    ...chainsForMode(push, options, options.peerAuthentication === false ? 'DISABLE' : composed.mode, {
      name: VIRTUAL_INBOUND,
      filters: [...security.tcp(input(0)), tcpProxy(PASSTHROUGH_CLUSTER, PASSTHROUGH_CLUSTER)],
      alpn: [],
    }),
  );
  return {
    name: VIRTUAL_INBOUND,
    address: socketAddress('0.0.0.0', INBOUND_PORT),
    use_original_dst: { value: true },
    traffic_direction: 'INBOUND',
    continue_on_listener_filters_timeout: true,
    listener_filters: [ORIGINAL_DST, TLS_INSPECTOR, HTTP_INSPECTOR],
    filter_chains: chains,
  };
}

function outboundHttpChain(port: number, useRemoteAddress: boolean): object {
  return {
    filters: [
      httpConnectionManager({
        stat_prefix: `outbound_0.0.0.0_${port}`,
        rds: { route_config_name: String(port), config_source: ADS_SOURCE },
        http_filters: [...telemetryFilters('outbound'), ROUTER_FILTER],
        // What the app sent is not trusted: the server side sets the header from the connection.
        forward_client_cert_details: 'SANITIZE',
        use_remote_address: { value: useRemoteAddress },
      }),
    ],
  };
}

/** The addresses a TCP service port's chain matches: its cluster IP and, for proxies that use them, the addresses allocated to it. */
function tcpChainAddresses(service: Service, allocated: readonly string[]): string[] {
  return [service.clusterIp ?? '', ...allocated].filter((address) => address !== '' && address !== 'None');
}

/** A TCP service port's chain: matching its addresses, or everything (a listener of its own, a headless Service's catch-all). */
function outboundTcpChain(service: Service, port: ServicePort, addresses: readonly string[]): object {
  const cluster = outboundClusterName(port.port, '', service.hostname);
  return {
    name: cluster,
    ...(addresses.length > 0
      ? {
          filter_chain_match: {
            prefix_ranges: addresses.map((address) => ({ address_prefix: address, prefix_len: { value: address.includes(':') ? 128 : 32 } })),
          },
        }
      : {}),
    filters: [tcpProxy(cluster, cluster)],
  };
}

/** A Kubernetes Service without a cluster IP: clients dial its pods' addresses. */
function isHeadless(service: Service): boolean {
  return service.clusterIp === 'None' && !service.entry;
}

/**
 * The reference's listeners for a headless Service's TCP port: one per pod address,
 * `<podIP>_<port>`, whose one chain takes whatever reaches that address and port (a StatefulSet's
 * members each reached on the port every other Service may hold on 0.0.0.0).
 */
function podListeners(push: PushContext, service: Service, port: ServicePort): ListenerResource[] {
  const endpoints = push.endpointsByServicePort.get(servicePortKey(service.hostname, port.port)) ?? [];
  const addresses = [...new Set(endpoints.map((endpoint) => endpoint.address).filter((address) => isIP(address) !== 0))].sort();
  return addresses.map((address) => ({
    name: `${address}_${port.port}`,
    address: socketAddress(address, port.port),
    bind_to_port: { value: false },
    traffic_direction: 'OUTBOUND',
    filter_chains: [outboundTcpChain(service, port, [])],
  }));
}

interface OutboundPort {
  /** Some HTTP (or sniffed) service has the port: the listener's last chain routes by RDS. */
  http: boolean;
  /** The cluster IPs of those HTTP services. */
  readonly httpAddresses: string[];
  readonly tcp: object[];
  /** The address sets of the TCP chains, as match keys. */
  readonly tcpMatches: Set<string>;
  /** Every address a TCP chain matches. */
  readonly tcpAddresses: Set<string>;
  /** A TCP service port without an address: no chain can tell its traffic apart. */
  tcpWithoutAddress: boolean;
  /** The first headless Service's chain for what no other chain matches (pod listeners off). */
  tcpCatchAll?: object;
}

/**
 * Per service port `0.0.0.0_<port>`: HTTP ports route by RDS `<port>`; TCP services get a chain per
 * VIP (an entry without addresses: the ones allocated to it, for proxies that use them). What
 * cannot be told apart is left out and reported, as the reference's listener conflicts: a TCP
 * chain matching the same addresses as an earlier one (TCP over TCP), a TCP service without an
 * address on a port HTTP services hold (TCP over HTTP), an HTTP service whose cluster IP a TCP
 * chain of the port takes (HTTP over TCP).
 */
function outboundListeners(
  push: PushContext,
  namespace: string,
  allocation: Proxy | undefined,
  switches: { readonly headlessPodListeners: boolean; readonly useRemoteAddress: boolean },
  findings?: PushFindings,
): ListenerResource[] {
  const { headlessPodListeners, useRemoteAddress } = switches;
  const byPort = new Map<number, OutboundPort>();
  const perPod = new Map<string, ListenerResource>();
  for (const service of visibleServices(push, namespace)) {
    for (const port of service.ports) {
      if (port.port === OUTBOUND_PORT || port.port === INBOUND_PORT) continue;
      if (headlessPodListeners && isHeadless(service) && !isHttpRoutable(port)) {
        for (const listener of podListeners(push, service, port)) {
          if (perPod.has(listener.name)) findings?.add('outbound-tcp-over-tcp', listener.name);
          else perPod.set(listener.name, listener);
        }
        continue;
      }
      let entry = byPort.get(port.port);
      if (!entry) {
        entry = { http: false, httpAddresses: [], tcp: [], tcpMatches: new Set(), tcpAddresses: new Set(), tcpWithoutAddress: false };
        byPort.set(port.port, entry);
      }
      if (isHttpRoutable(port)) {
        entry.http = true;
        if (service.clusterIp && service.clusterIp !== 'None') entry.httpAddresses.push(service.clusterIp);
        continue;
      }
      const addresses = tcpChainAddresses(service, allocation ? allocatedAddressesFor(push, allocation, service) : []);
      if (addresses.length === 0) {
        entry.tcpWithoutAddress = true;
        if (isHeadless(service) && entry.tcpCatchAll === undefined) entry.tcpCatchAll = outboundTcpChain(service, port, []);
        continue;
      }
      const match = [...addresses].sort().join(',');
      if (entry.tcpMatches.has(match)) {
        findings?.add('outbound-tcp-over-tcp', `0.0.0.0_${port.port}`);
        continue;
      }
      entry.tcpMatches.add(match);
      for (const address of addresses) entry.tcpAddresses.add(address);
      entry.tcp.push(outboundTcpChain(service, port, addresses));
    }
  }
  const listeners: ListenerResource[] = [];
  for (const [port, entry] of [...byPort.entries()].sort(([a], [b]) => a - b)) {
    const name = `0.0.0.0_${port}`;
    if (entry.http && entry.tcpWithoutAddress) findings?.add('outbound-tcp-over-http', name);
    if (entry.httpAddresses.some((address) => entry.tcpAddresses.has(address))) findings?.add('outbound-http-over-tcp', name);
    const chains = [...entry.tcp, ...(entry.http ? [outboundHttpChain(port, useRemoteAddress)] : entry.tcpCatchAll ? [entry.tcpCatchAll] : [])];
    if (chains.length === 0) continue;
    listeners.push({
      name,
      address: socketAddress('0.0.0.0', port),
      bind_to_port: { value: false },
      traffic_direction: 'OUTBOUND',
      filter_chains: chains,
    });
  }
  return [...listeners, ...[...perPod.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))];
}

function virtualOutbound(push: PushContext): ListenerResource {
  const registryOnly = push.meshConfig.outboundTrafficPolicy.mode === 'REGISTRY_ONLY';
  const cluster = registryOnly ? BLACKHOLE_CLUSTER : PASSTHROUGH_CLUSTER;
  return {
    name: VIRTUAL_OUTBOUND,
    address: socketAddress('0.0.0.0', OUTBOUND_PORT),
    use_original_dst: { value: true },
    traffic_direction: 'OUTBOUND',
    filter_chains: [{ name: registryOnly ? 'virtualOutbound-blackhole' : 'virtualOutbound-catchall-tcp', filters: [tcpProxy(cluster, cluster)] }],
  };
}

/**
 * The listeners of a sidecar: `virtualOutbound` (15001) handing captured traffic to the
 * `0.0.0.0_<port>` listener of its destination port, those outbound listeners, and
 * `virtualInbound` (15006) with per-port chains for the mutual TLS mode of each container port.
 */
export function buildSidecarListeners(proxy: Proxy, push: PushContext, options: BuildSidecarListenersOptions = {}): ListenerResource[] {
  const allocation = usesAutoAllocation(proxy) ? proxy : undefined;
  const own = ownPodListener(proxy);
  return [
    ...buildSidecarOutboundListeners(push, proxy.configNamespace, allocation, undefined, options).filter((listener) => !own(listener.name)),
    virtualInbound(proxy, push, options),
  ];
}

/**
 * Whether a listener is a headless Service's listener for the proxy's own address: its app
 * reaching itself does not pass the outbound side, and the inbound side has the port.
 */
export function ownPodListener(proxy: Proxy): (name: string) => boolean {
  const [first] = proxy.ipAddresses;
  return (name) => first !== undefined && name.startsWith(`${first}_`);
}

/**
 * The listeners sidecars of a push share: `virtualOutbound` and the `0.0.0.0_<port>` ones. With
 * `allocation`, a proxy that uses allocated addresses: those of its address families are added.
 * The conflicts left out go to `findings`.
 */
export function buildSidecarOutboundListeners(
  push: PushContext,
  namespace: string,
  allocation?: Proxy,
  findings?: PushFindings,
  options: Pick<BuildSidecarListenersOptions, 'headlessPodListeners' | 'sidecarUseRemoteAddress'> = {},
): ListenerResource[] {
  const switches = { headlessPodListeners: options.headlessPodListeners !== false, useRemoteAddress: options.sidecarUseRemoteAddress === true };
  return [virtualOutbound(push), ...outboundListeners(push, namespace, allocation, switches, findings)];
}

/** The sidecar's own listener: `virtualInbound`; what it finds wrong goes to `findings`. */
export function buildSidecarInboundListener(
  proxy: Proxy,
  push: PushContext,
  options: BuildSidecarListenersOptions = {},
  findings?: PushFindings,
): ListenerResource {
  return virtualInbound(proxy, push, options, findings);
}
