import type { GatewayServer } from '../../crds/index.js';
import { matchesLabels } from '../../controllers/index.js';
import type { Proxy } from '../proxy.js';
import { workloadOfProxy } from './proxy-workload.js';
import type { IndexedGateway, IndexedVirtualService, PushContext } from './push-context.js';

const HTTP_PROTOCOLS = new Set(['HTTP', 'HTTP2', 'GRPC', 'GRPC-WEB']);

/** One server of a Gateway that selects the proxy. */
export interface GatewayServerEntry {
  readonly gateway: IndexedGateway;
  readonly server: GatewayServer;
  readonly index: number;
}

/** The labels a gateway is selected by: its pod's, else what its node metadata says. */
export function gatewayLabelsOf(push: PushContext, proxy: Proxy): Readonly<Record<string, string>> {
  return workloadOfProxy(push, proxy)?.labels ?? proxy.metadata.labels;
}

/** The servers of every Gateway whose selector matches the proxy's labels, by port number. */
export function gatewayServersByPort(push: PushContext, proxy: Proxy): Map<number, GatewayServerEntry[]> {
  const labels = gatewayLabelsOf(push, proxy);
  const byPort = new Map<number, GatewayServerEntry[]>();
  for (const gateway of push.gateways) {
    const selector = gateway.gateway.spec.selector ?? {};
    if (Object.keys(selector).length === 0 || !matchesLabels(selector, labels)) continue;
    (gateway.gateway.spec.servers ?? []).forEach((server, index) => {
      let list = byPort.get(server.port.number);
      if (!list) byPort.set(server.port.number, (list = []));
      list.push({ gateway, server, index });
    });
  }
  return byPort;
}

export type ServerKind = 'http' | 'https' | 'unsupported';

/** HTTP servers share a plain chain; HTTPS servers that terminate TLS get their own chain; passthrough and TCP are not built. */
export function serverKind(server: GatewayServer): ServerKind {
  const protocol = server.port.protocol.toUpperCase();
  if (HTTP_PROTOCOLS.has(protocol)) return 'http';
  if (protocol === 'HTTPS' && server.tls?.mode !== undefined && server.tls.mode !== 'PASSTHROUGH' && server.tls.mode !== 'AUTO_PASSTHROUGH') return 'https';
  return 'unsupported';
}

export function httpsRouteName(entry: GatewayServerEntry): string {
  return `https.${entry.server.port.number}.${entry.server.port.name}.${entry.gateway.name}.${entry.gateway.namespace}`;
}

/** `host` of a server host, with its optional `namespace/` part split off (`.` is the gateway's own namespace). */
function splitServerHost(host: string, gatewayNamespace: string): { namespace: string | undefined; host: string } {
  const slash = host.indexOf('/');
  if (slash < 0) return { namespace: undefined, host };
  const namespace = host.slice(0, slash);
  return { namespace: namespace === '.' ? gatewayNamespace : namespace === '*' ? undefined : namespace, host: host.slice(slash + 1) };
}

/** The more specific of two hosts when they overlap (wildcards `*` and `*.suffix`), else undefined. */
export function intersectHosts(a: string, b: string): string | undefined {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y) return x;
  if (x === '*') return y;
  if (y === '*') return x;
  if (x.startsWith('*.') && y.endsWith(x.slice(1))) return y;
  if (y.startsWith('*.') && x.endsWith(y.slice(1))) return x;
  return undefined;
}

function bindsTo(virtualService: IndexedVirtualService, gateway: IndexedGateway): boolean {
  return (virtualService.virtualService.spec.gateways ?? []).some((name) => {
    if (name.includes('/')) return name === `${gateway.namespace}/${gateway.name}`;
    return name === gateway.name && virtualService.namespace === gateway.namespace;
  });
}

/** The virtual hosts of one server: each VirtualService bound to its gateway, hosts intersected with the server's. */
export function virtualServicesOf(push: PushContext, entry: GatewayServerEntry): { host: string; virtualService: IndexedVirtualService }[] {
  const out: { host: string; virtualService: IndexedVirtualService }[] = [];
  for (const virtualService of push.virtualServices) {
    if (!bindsTo(virtualService, entry.gateway)) continue;
    for (const serverHost of entry.server.hosts) {
      const { namespace, host } = splitServerHost(serverHost, entry.gateway.namespace);
      if (namespace !== undefined && namespace !== virtualService.namespace) continue;
      for (const vsHost of virtualService.hosts) {
        const matched = intersectHosts(host, vsHost);
        if (matched !== undefined) out.push({ host: matched, virtualService });
      }
    }
  }
  return out;
}
