import type { Generator, NamedResource } from '../../generator.js';
import type { Proxy } from '../../proxy.js';
import { composePeerAuthentication, mtlsModeForPort } from '../../model/peer-authentication.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../../envoy/type-urls.js';
import { buildClusterLoadAssignment } from '../cluster-load-assignment.js';
import { outboundClusterName, parseClusterName } from '../../model/cluster-names.js';
import { ADS_SOURCE, httpConnectionManager, ROUTER_FILTER } from '../http-connection-manager.js';
import { grpcAuthorizationFilters, grpcClusterTransportSocket, grpcServerMtlsMode, grpcServerTlsSocket } from './grpc-security.js';
import { workloadOfProxy } from '../proxy-workload.js';
import { resolveRuleHost, type PushContext } from '../../model/push-context.js';
import { buildSidecarClusters } from '../sidecar/sidecar-clusters.js';
import { buildDefaultRoute } from '../sidecar/sidecar-route-configuration.js';
import { buildVirtualServiceRoutes, type VirtualServiceRouteOptions } from '../virtual-service-routes.js';
import { virtualServiceFor } from '../../model/virtual-service-selection.js';

/** The server listener names proxyless gRPC servers ask for (the bootstrap's `server_listener_resource_name_template`). */
export const GRPC_SERVER_LISTENER_PREFIX = 'xds.mesh.io/grpc/lds/inbound/';

function splitHostPort(name: string): { host: string; port: number | undefined } {
  const colon = name.lastIndexOf(':');
  if (colon < 0 || name.endsWith(']')) return { host: name, port: undefined };
  const port = Number(name.slice(colon + 1));
  return Number.isInteger(port) && port > 0 ? { host: name.slice(0, colon), port } : { host: name, port: undefined };
}

/** A client listener: an API listener whose HCM routes by RDS `outbound|<port>||<fqdn>`. */
function clientListener(name: string, routeName: string): object {
  return {
    name,
    api_listener: {
      api_listener: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
        rds: { route_config_name: routeName, config_source: ADS_SOURCE },
        http_filters: [ROUTER_FILTER],
      },
    },
  };
}

/**
 * A server listener for `<ip>:<port>`: exactly one chain and one HCM, as proxyless servers
 * require, with the authorization filters of the workload before the router and an inline
 * route that does not forward (the gRPC server answers). STRICT (or PERMISSIVE on a workload
 * labelled for mesh TLS, see `grpcServerMtlsMode`) gives the chain mutual TLS.
 */
function serverListener(proxy: Proxy, push: PushContext, name: string): object | undefined {
  const { host, port } = splitHostPort(name.slice(GRPC_SERVER_LISTENER_PREFIX.length));
  if (port === undefined) return undefined;
  const workload = workloadOfProxy(push, proxy);
  const namespace = workload?.namespace ?? proxy.configNamespace;
  const labels = workload?.labels ?? proxy.metadata.labels;
  const composed = composePeerAuthentication({
    rootNamespace: push.rootNamespace,
    policies: push.peerAuthentications.candidates(namespace),
    workload: { namespace, labels },
  });
  const strict = grpcServerMtlsMode(mtlsModeForPort(composed, port), labels) === 'STRICT';
  const suffix = strict ? 'mtls' : 'plaintext';
  const chain: Record<string, unknown> = {
    name: `inbound-${suffix}`,
    filters: [
      httpConnectionManager({
        stat_prefix: `inbound_${port}`,
        route_config: {
          name: 'inbound',
          virtual_hosts: [{ name: 'inbound', domains: ['*'], routes: [{ match: { prefix: '/' }, non_forwarding_action: {} }] }],
        },
        http_filters: [...grpcAuthorizationFilters(push, namespace, labels), ROUTER_FILTER],
      }),
    ],
    ...(strict ? { transport_socket: grpcServerTlsSocket() } : {}),
  };
  return { name, address: { socket_address: { address: host, port_value: port } }, filter_chains: [chain], traffic_direction: 'INBOUND' };
}

/** LDS for proxyless gRPC: one API listener per requested `host[:port]` (short names resolved), server listeners by template. */
function grpcListeners(proxy: Proxy, push: PushContext, names: readonly string[]): NamedResource[] {
  const out: NamedResource[] = [];
  for (const name of names) {
    if (name.startsWith(GRPC_SERVER_LISTENER_PREFIX)) {
      const listener = serverListener(proxy, push, name);
      if (listener) out.push({ name, resource: listener });
      continue;
    }
    const { host, port } = splitHostPort(name);
    const fqdn = resolveRuleHost(host, proxy.configNamespace, push.domain);
    const service = push.serviceByHost.get(fqdn) ?? (host.includes('.') ? undefined : push.serviceByHost.get(`${host}.svc.${push.domain}`));
    if (!service) continue;
    const servicePort = port !== undefined ? service.ports.find((candidate) => candidate.port === port) : service.ports[0];
    if (!servicePort) continue;
    out.push({ name, resource: clientListener(name, outboundClusterName(servicePort.port, '', service.hostname)) });
  }
  return out;
}

function grpcRoute(proxy: Proxy, push: PushContext, name: string, options: VirtualServiceRouteOptions): object | undefined {
  const parsed = parseClusterName(name);
  if (!parsed || parsed.direction !== 'outbound') return undefined;
  const service = push.serviceByHost.get(parsed.hostname);
  if (!service) return undefined;
  const virtualService = virtualServiceFor(push, proxy, service.hostname);
  const routes = virtualService
    ? buildVirtualServiceRoutes({ ...options, proxy, push, virtualService, port: parsed.port })
    : [buildDefaultRoute(service.hostname, parsed.port)];
  const shortName = `${service.name}.${service.namespace}`;
  const domains = [
    service.hostname,
    `${service.hostname}:${parsed.port}`,
    shortName,
    `${shortName}:${parsed.port}`,
    service.name,
    `${service.name}:${parsed.port}`,
  ];
  return { name, virtual_hosts: [{ name: `${service.hostname}:${parsed.port}`, domains, routes }] };
}

/**
 * The generators for proxyless gRPC clients and servers (`GENERATOR=grpc`), within what
 * `@grpc/grpc-js-xds` accepts: API listeners, server listeners by template, RDS per listener,
 * EDS clusters for the requested names (round robin unless a DestinationRule says otherwise),
 * localities with a weight.
 */
export function newGrpcGenerators(options: VirtualServiceRouteOptions = {}): Generator<PushContext>[] {
  return [
    {
      typeUrl: LISTENER_TYPE,
      generate: (proxy, push, request) => (request.full ? { resources: grpcListeners(proxy, push, request.names) } : undefined),
    },
    {
      typeUrl: ROUTE_TYPE,
      generate(proxy, push, request) {
        if (!request.full) return undefined;
        return {
          resources: request.names.flatMap((name) => {
            const route = grpcRoute(proxy, push, name, options);
            return route ? [{ name, resource: route }] : [];
          }),
        };
      },
    },
    {
      typeUrl: CLUSTER_TYPE,
      generate(proxy, push, request) {
        if (!request.full) return undefined;
        const wanted = new Set(request.names);
        // Proxyless clients resolve every cluster over EDS, a headless Service's too: there is no original destination.
        const clusters = buildSidecarClusters(proxy, push, { clusterTransportSocket: grpcClusterTransportSocket, edsForHeadless: true })
          .filter((cluster) => cluster['type'] === 'EDS' && (wanted.size === 0 || wanted.has(cluster.name)))
          .map((cluster) => ({ ...cluster, lb_policy: cluster['lb_policy'] === 'LEAST_REQUEST' ? 'ROUND_ROBIN' : cluster['lb_policy'] }));
        return { resources: clusters.map((cluster) => ({ name: cluster.name, resource: cluster })) };
      },
    },
    {
      typeUrl: ENDPOINT_TYPE,
      generate(proxy, push, request) {
        let names = [...request.names];
        if (!request.full && request.configsUpdated.length > 0) {
          const changed = new Set(
            request.configsUpdated.filter((key) => key.kind === 'Service').map((key) => `${key.name}.${key.namespace}.svc.${push.domain}`),
          );
          names = names.filter((name) => changed.has(parseClusterName(name)?.hostname ?? ''));
          if (names.length === 0) return undefined;
        }
        return {
          resources: names.map((name) => {
            const assignment = buildClusterLoadAssignment(push, proxy, name) as { cluster_name: string; endpoints?: Record<string, unknown>[] };
            // gRPC needs a locality on every locality entry.
            const endpoints = (assignment.endpoints ?? []).map((entry) => ({ locality: { region: '', zone: '' }, ...entry }));
            return { name, resource: { ...assignment, endpoints } };
          }),
        };
      },
    },
  ];
}
