import type { GatewayServer } from '../../../crds/index.js';
import { labelsMatch } from '../../../names/index.js';
import type { Proxy } from '../../proxy.js';
import { inboundPortsOf, workloadOfProxy } from '../proxy-workload.js';
import type { IndexedGateway, PushContext } from '../../model/push-context.js';

// Host intersection and VirtualService binding live beside the VirtualService views.

const HTTP_PROTOCOLS: ReadonlySet<string> = new Set(['HTTP', 'HTTP2', 'GRPC', 'GRPC-WEB']);
export const WILDCARD_ADDRESS = '0.0.0.0';

/** How the gateway generators pick and place Gateways (the settings registry's values). */
export interface GatewaySelectionOptions {
  /** PILOT_SCOPE_GATEWAY_TO_NAMESPACE: a gateway proxy takes only the Gateways of its own namespace. */
  readonly scopeToNamespace?: boolean;
  /** PILOT_USE_TARGET_PORT_FOR_GATEWAY_ROUTES (default true): `http.<port>` names the listener (target) port, not the server port. */
  readonly useTargetPortForRoutes?: boolean;
}

/**
 * What a server becomes: `http` servers share one plain-text chain per port, `https` servers
 * terminate TLS in their own chain with their own routes, `tls-terminate` servers terminate TLS
 * in front of a tcp_proxy, `passthrough` servers route on SNI without terminating, `tcp`
 * servers proxy opaque bytes. `auto-passthrough` (SNI-DNAT) is recognised but not built.
 */
export type ServerKind = 'http' | 'https' | 'tls-terminate' | 'passthrough' | 'auto-passthrough' | 'tcp';

/** One server of a Gateway that selects the proxy, as merged onto a listener. */
export interface GatewayServerEntry {
  readonly gateway: IndexedGateway;
  readonly server: GatewayServer;
  /** The server's position in `spec.servers`. */
  readonly index: number;
  readonly kind: ServerKind;
  /** The port the listener binds: the gateway Service's target port when it maps the server port, else the server port. */
  readonly listenerPort: number;
  /** The address the listener binds (`0.0.0.0` unless the server has a `bind`). */
  readonly bind: string;
  /** RDS name of `http` and `https` servers. */
  readonly routeName?: string;
}

/** A server the merge left out, and why (the reference logs and counts these). */
export interface RejectedServer {
  readonly gateway: IndexedGateway;
  readonly index: number;
  readonly reason: string;
}

/** One bound listener: its address and port and the servers merged onto it, in Gateway order. */
export interface GatewayListenerSpec {
  readonly name: string;
  readonly bind: string;
  readonly port: number;
  readonly servers: readonly GatewayServerEntry[];
}

/** The Gateways selecting one proxy, merged into listeners and route names. */
export interface MergedGateway {
  /** Sorted by port, then bind address. */
  readonly listeners: readonly GatewayListenerSpec[];
  readonly serversByRouteName: ReadonlyMap<string, readonly GatewayServerEntry[]>;
  readonly rejected: readonly RejectedServer[];
}

/** `<namespace>/<name>`: how VirtualServices and matches name a Gateway once resolved. */
export function gatewayKey(gateway: Pick<IndexedGateway, 'namespace' | 'name'>): string {
  return `${gateway.namespace}/${gateway.name}`;
}

/** The labels a gateway is selected by: its pod's, else what its node metadata says. */
export function gatewayLabelsOf(push: PushContext, proxy: Proxy): Readonly<Record<string, string>> {
  return workloadOfProxy(push, proxy)?.labels ?? proxy.metadata.labels;
}

/**
 * The Gateways that apply to a router proxy, in namespace/name order: a Gateway without a
 * selector applies to every gateway proxy, one with a selector to proxies whose labels include
 * it; with `scopeToNamespace` only Gateways of the proxy's namespace count.
 */
export function selectedGateways(push: PushContext, proxy: Proxy, options: GatewaySelectionOptions = {}): IndexedGateway[] {
  const labels = gatewayLabelsOf(push, proxy);
  return push.gateways.filter((gateway) => {
    if (options.scopeToNamespace && gateway.namespace !== proxy.configNamespace) return false;
    const selector = gateway.gateway.spec.selector ?? {};
    return Object.keys(selector).length === 0 || labelsMatch(selector, labels);
  });
}

export function isHttpProtocol(protocol: string): boolean {
  return HTTP_PROTOCOLS.has(protocol.toUpperCase());
}

/** A TLS mode absent from a server's `tls` block means PASSTHROUGH. */
export function serverKind(server: GatewayServer): ServerKind | undefined {
  const protocol = server.port.protocol.toUpperCase();
  if (isHttpProtocol(protocol)) return 'http';
  if (protocol === 'HTTPS' || protocol === 'TLS') {
    if (!server.tls) return undefined;
    const mode = server.tls.mode ?? 'PASSTHROUGH';
    if (mode === 'PASSTHROUGH') return 'passthrough';
    if (mode === 'AUTO_PASSTHROUGH') return 'auto-passthrough';
    return protocol === 'HTTPS' ? 'https' : 'tls-terminate';
  }
  return server.tls && server.tls.mode !== undefined && server.tls.mode !== 'PASSTHROUGH' && server.tls.mode !== 'AUTO_PASSTHROUGH' ? 'tls-terminate' : 'tcp';
}

/** Plain-text servers (HTTP, TCP) and TLS servers cannot share a port. */
function isTlsServer(kind: ServerKind): boolean {
  return kind !== 'http' && kind !== 'tcp';
}

function routeNameOf(
  server: GatewayServer,
  kind: ServerKind,
  gateway: IndexedGateway,
  listenerPort: number,
  options: GatewaySelectionOptions,
): string | undefined {
  const bindSuffix = server.bind ? `.${server.bind}` : '';
  if (kind === 'http') return `http.${options.useTargetPortForRoutes === false ? server.port.number : listenerPort}${bindSuffix}`;
  if (kind === 'https') return `https.${server.port.number}.${server.port.name}.${gateway.name}.${gateway.namespace}${bindSuffix}`;
  return undefined;
}

/**
 * The listener ports of a server port: the target ports the Services selecting the gateway's
 * pod map that port to, else the port itself (the reference's `resolvePorts`).
 */
function listenerPortsFor(push: PushContext, proxy: Proxy, serverPort: number): number[] {
  const workload = workloadOfProxy(push, proxy);
  const targets = new Set<number>();
  if (workload) {
    for (const port of inboundPortsOf(push, workload)) if (port.servicePort.port === serverPort) targets.add(port.targetPort);
  }
  return targets.size > 0 ? [...targets].sort((a, b) => a - b) : [serverPort];
}

interface PortState {
  readonly spec: { name: string; bind: string; port: number; servers: GatewayServerEntry[] };
  readonly tls: boolean;
  readonly protocol: string;
  readonly tlsHosts: Set<string>;
}

/**
 * Merges the servers of the selected Gateways as the reference does: servers on one port share
 * its listener when they are all plain-text HTTP (one `http.<port>` route) or all TLS (told
 * apart by SNI, each terminating HTTPS server with its own route); anything else on a taken
 * port, a TLS host already served on the port, or a repeated HTTPS route name is left out.
 */
export function mergeGateways(push: PushContext, proxy: Proxy, options: GatewaySelectionOptions = {}): MergedGateway {
  const ports = new Map<string, PortState>();
  const serversByRouteName = new Map<string, GatewayServerEntry[]>();
  const rejected: RejectedServer[] = [];
  for (const gateway of selectedGateways(push, proxy, options)) {
    (gateway.gateway.spec.servers ?? []).forEach((server, index) => {
      const reject = (reason: string): void => void rejected.push({ gateway, index, reason });
      const kind = serverKind(server);
      if (kind === undefined) return reject(`${server.port.protocol} server without tls settings`);
      if (server.bind?.startsWith('unix://')) return reject('unix domain socket binds are not supported');
      const bind = server.bind ?? WILDCARD_ADDRESS;
      for (const listenerPort of listenerPortsFor(push, proxy, server.port.number)) {
        const key = `${bind}_${listenerPort}`;
        const protocol = server.port.protocol.toUpperCase();
        let state = ports.get(key);
        if (state) {
          if (state.tls !== isTlsServer(kind)) {
            reject(`port ${listenerPort} already serves ${state.tls ? 'TLS' : 'plain text'}`);
            continue;
          }
          if (!state.tls && (kind !== 'http' || state.protocol !== protocol)) {
            reject(`port ${listenerPort} already serves ${state.protocol}`);
            continue;
          }
        }
        if (isTlsServer(kind)) {
          const known = state?.tlsHosts;
          const duplicates = server.hosts.filter((host) => known?.has(host));
          if (duplicates.length > 0) {
            reject(`port ${listenerPort} already serves TLS hosts ${duplicates.join(', ')}`);
            continue;
          }
        }
        const routeName = routeNameOf(server, kind, gateway, listenerPort, options);
        if (kind === 'https' && routeName !== undefined && serversByRouteName.has(routeName)) {
          reject(`route ${routeName} is already served`);
          continue;
        }
        if (!state) {
          state = { spec: { name: key, bind, port: listenerPort, servers: [] }, tls: isTlsServer(kind), protocol, tlsHosts: new Set() };
          ports.set(key, state);
        }
        if (isTlsServer(kind)) for (const host of server.hosts) state.tlsHosts.add(host);
        const entry: GatewayServerEntry = { gateway, server, index, kind, listenerPort, bind, ...(routeName !== undefined ? { routeName } : {}) };
        state.spec.servers.push(entry);
        if (routeName !== undefined) serversByRouteName.set(routeName, [...(serversByRouteName.get(routeName) ?? []), entry]);
      }
    });
  }
  const listeners = [...ports.values()].map((state) => state.spec).sort((a, b) => a.port - b.port || (a.bind < b.bind ? -1 : a.bind > b.bind ? 1 : 0));
  return { listeners, serversByRouteName, rejected };
}

/** The servers of every Gateway selecting the proxy, by listener port (bound to any address). */
export function gatewayServersByPort(push: PushContext, proxy: Proxy, options: GatewaySelectionOptions = {}): Map<number, GatewayServerEntry[]> {
  const byPort = new Map<number, GatewayServerEntry[]>();
  for (const listener of mergeGateways(push, proxy, options).listeners) byPort.set(listener.port, [...(byPort.get(listener.port) ?? []), ...listener.servers]);
  return byPort;
}

/** Identifies the servers an output is built from: part of cache keys. */
export function serversKey(entries: readonly GatewayServerEntry[]): string {
  return entries.map((entry) => `${gatewayKey(entry.gateway)}#${entry.index}`).join(',');
}

/** A label set as a stable string: part of cache keys. */
export function labelsKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
