import { X509Certificate } from 'node:crypto';
import { MeshError } from '../../runtime/index.js';
import { formatTable } from '../kube/table.js';
import { clustersOf, configNameOf, configPathOf, listenersOf, routeConfigsOf, secretsOf, type EnvoyConfigDump, type Json } from './config-dump.js';

/** The reference's tables pad every column with five spaces. */
const PADDING = 5;

export interface ClusterFilter {
  readonly fqdn?: string;
  readonly port?: number;
  readonly subset?: string;
  readonly direction?: string;
}

interface ClusterRow {
  readonly cluster: Json;
  readonly fqdn: string;
  readonly port: string;
  readonly subset: string;
  readonly direction: string;
  readonly conforming: boolean;
}

/** `outbound|9080|v1|reviews.default.svc.cluster.local`: direction, port, subset, FQDN. */
function parseClusterName(cluster: Json): ClusterRow {
  const name = String(cluster['name'] ?? '');
  const parts = name.split('|');
  if (parts.length !== 4 || !/^\d+$/.test(parts[1] ?? '')) return { cluster, fqdn: name, port: '', subset: '', direction: '', conforming: false };
  const [direction = '', port = '', subset = '', fqdn = ''] = parts;
  return { cluster, fqdn, port, subset, direction, conforming: true };
}

/** The clusters a filter keeps, sorted as the reference sorts them (FQDN, then subset, port, direction). */
export function filteredClusters(dump: EnvoyConfigDump, filter: ClusterFilter): Json[] {
  return clusterRows(dump, filter).map((row) => row.cluster);
}

function clusterRows(dump: EnvoyConfigDump, filter: ClusterFilter): ClusterRow[] {
  return clustersOf(dump)
    .map(parseClusterName)
    .filter(
      (row) =>
        (filter.fqdn === undefined || row.fqdn.includes(filter.fqdn)) &&
        (filter.port === undefined || row.port === String(filter.port)) &&
        (filter.subset === undefined || row.subset === filter.subset) &&
        (filter.direction === undefined || row.direction === filter.direction),
    )
    .sort(
      (a, b) =>
        a.fqdn.localeCompare(b.fqdn) || a.subset.localeCompare(b.subset) || Number(a.port || 0) - Number(b.port || 0) || a.direction.localeCompare(b.direction),
    );
}

/** `SERVICE FQDN  PORT  SUBSET  DIRECTION  TYPE  DESTINATION RULE`. */
export function clusterSummary(dump: EnvoyConfigDump, filter: ClusterFilter): string {
  const rows = clusterRows(dump, filter).map((row) => {
    const type = String(row.cluster['type'] ?? (row.cluster['cluster_type'] ? 'CUSTOM' : 'EDS'));
    if (!row.conforming) return [row.fqdn, '-', '-', '-', type, '-'];
    return [row.fqdn || '-', row.port || '-', row.subset || '-', row.direction || '-', type, configNameOf(configPathOf(row.cluster['metadata'])) ?? '-'];
  });
  return formatTable([['SERVICE FQDN', 'PORT', 'SUBSET', 'DIRECTION', 'TYPE', 'DESTINATION RULE'], ...rows], PADDING);
}

export interface ListenerFilter {
  readonly address?: string;
  readonly port?: number;
  readonly type?: string;
}

const HCM = 'envoy.filters.network.http_connection_manager';
const TCP_PROXY = 'envoy.filters.network.tcp_proxy';

function socketOf(listener: Json): { address: string; port: number } {
  const socket = ((listener['address'] as Json | undefined)?.['socket_address'] as Json | undefined) ?? {};
  return { address: String(socket['address'] ?? ''), port: Number(socket['port_value'] ?? 0) };
}

function chainsOf(listener: Json): Json[] {
  const chains = Array.isArray(listener['filter_chains']) ? (listener['filter_chains'] as Json[]) : [];
  const fallback = listener['default_filter_chain'] as Json | undefined;
  return fallback ? [...chains, fallback] : chains;
}

function filtersOf(chain: Json): Json[] {
  return Array.isArray(chain['filters']) ? (chain['filters'] as Json[]) : [];
}

/** HTTP, TCP, HTTP+TCP or UNKNOWN, from the connection managers and TCP proxies (a black hole is not TCP). */
function listenerType(listener: Json): string {
  let http = 0;
  let tcp = 0;
  for (const chain of chainsOf(listener)) {
    for (const filter of filtersOf(chain)) {
      if (filter['name'] === HCM) http++;
      else if (filter['name'] === TCP_PROXY && !String((filter['typed_config'] as Json | undefined)?.['cluster'] ?? '').includes('BlackHoleCluster')) tcp++;
    }
  }
  return http > 0 && tcp > 0 ? 'HTTP+TCP' : http > 0 ? 'HTTP' : tcp > 0 ? 'TCP' : 'UNKNOWN';
}

function sortedListeners(dump: EnvoyConfigDump, filter: ListenerFilter): Json[] {
  return listenersOf(dump)
    .filter((listener) => {
      const { address, port } = socketOf(listener);
      return (
        (filter.address === undefined || address === filter.address) &&
        (filter.port === undefined || port === filter.port) &&
        (filter.type === undefined || listenerType(listener) === filter.type.toUpperCase())
      );
    })
    .sort((a, b) => socketOf(a).port - socketOf(b).port || socketOf(a).address.localeCompare(socketOf(b).address));
}

export const filteredListeners = sortedListeners;

const ALPN_DESCRIPTIONS: readonly [string, readonly string[]][] = [
  ['App: HTTP TLS', ['http/1.0', 'http/1.1', 'h2c', 'mesh-http/1.0', 'mesh-http/1.1', 'mesh-h2']],
  ['App: Mesh HTTP Plain', ['mesh', 'mesh-http/1.0', 'mesh-http/1.1', 'mesh-h2']],
  ['App: TCP TLS', ['mesh-peer-exchange', 'mesh']],
  ['App: HTTP', ['http/1.0', 'http/1.1', 'h2c']],
];

function describeMatch(chain: Json): string {
  const match = (chain['filter_chain_match'] as Json | undefined) ?? {};
  const parts: string[] = [];
  const names = match['server_names'] as string[] | undefined;
  if (names?.length) parts.push(`SNI: ${names.join(',')}`);
  if (typeof match['transport_protocol'] === 'string' && match['transport_protocol'] !== '') parts.push(`Trans: ${match['transport_protocol']}`);
  const alpns = match['application_protocols'] as string[] | undefined;
  if (alpns?.length) {
    const known = ALPN_DESCRIPTIONS.find(([, set]) => set.length === alpns.length && set.every((alpn) => alpns.includes(alpn)));
    parts.push(known ? known[0] : `App: ${alpns.join(',')}`);
  }
  const ranges = ((match['prefix_ranges'] as Json[] | undefined) ?? []).map(
    (range) =>
      `${String(range['address_prefix'] ?? '')}/${String((range['prefix_len'] as Json | number | undefined) && typeof range['prefix_len'] === 'object' ? ((range['prefix_len'] as Json)['value'] ?? 0) : (range['prefix_len'] ?? 0))}`,
  );
  const port = match['destination_port'] as Json | number | undefined;
  const portValue = typeof port === 'object' && port !== null ? port['value'] : port;
  if (ranges.length > 0 || portValue !== undefined)
    parts.push(`Addr: ${ranges.length > 0 ? ranges.join(',') : '*'}${portValue !== undefined ? `:${String(portValue)}` : ''}`);
  return parts.length === 0 ? 'ALL' : parts.join('; ');
}

function describeDestination(chain: Json): string {
  for (const filter of filtersOf(chain)) {
    const config = (filter['typed_config'] as Json | undefined) ?? {};
    if (filter['name'] === TCP_PROXY) {
      const cluster = String(config['cluster'] ?? '');
      if (cluster !== '') return cluster.includes('Cluster') ? cluster : `Cluster: ${cluster}`;
      const weighted = ((config['weighted_clusters'] as Json | undefined)?.['clusters'] as Json[] | undefined) ?? [];
      return `Cluster: ${weighted.map((w) => String(w['name'] ?? '')).join(', ')}`;
    }
    if (filter['name'] === HCM) {
      const rds = config['rds'] as Json | undefined;
      if (rds) return `Route: ${String(rds['route_config_name'] ?? '')}`;
      const inline = config['route_config'] as Json | undefined;
      if (inline) {
        const routes = ((inline['virtual_hosts'] as Json[] | undefined) ?? []).flatMap((host) => (host['routes'] as Json[] | undefined) ?? []);
        const clusters = [
          ...new Set(routes.map((route) => String(((route['route'] as Json | undefined)?.['cluster'] as string | undefined) ?? '')).filter((c) => c !== '')),
        ];
        if (clusters.length === 1 && routes.length === 1 && describeRouteMatch(routes[0] ?? {}) === '/*')
          return clusters[0]?.includes('Cluster') ? (clusters[0] ?? '') : `Cluster: ${clusters[0] ?? ''}`;
        return `Inline Route: ${routes.map((route) => describeRouteMatch(route)).join('; ')}`;
      }
      return 'HTTP';
    }
  }
  return 'Non-HTTP/Non-TCP';
}

/** `ADDRESS  PORT  MATCH  DESTINATION` (verbose, the default), or `ADDRESS  PORT  TYPE`. */
export function listenerSummary(dump: EnvoyConfigDump, filter: ListenerFilter, verbose: boolean): string {
  const listeners = sortedListeners(dump, filter);
  if (!verbose)
    return formatTable([['ADDRESS', 'PORT', 'TYPE'], ...listeners.map((l) => [socketOf(l).address, String(socketOf(l).port), listenerType(l)])], PADDING);
  const rows = listeners.flatMap((listener) => {
    const { address, port } = socketOf(listener);
    return chainsOf(listener).map((chain) => [address, String(port), describeMatch(chain), describeDestination(chain)]);
  });
  return formatTable([['ADDRESS', 'PORT', 'MATCH', 'DESTINATION'], ...rows], PADDING);
}

function describeRouteMatch(route: Json): string {
  const match = (route['match'] as Json | undefined) ?? {};
  if (match['prefix'] === '/') return '/*';
  if (typeof match['prefix'] === 'string') return `${match['prefix']}*`;
  if (typeof match['path'] === 'string') return match['path'];
  const regex = (match['safe_regex'] as Json | undefined)?.['regex'];
  if (typeof regex === 'string') return regex === '.*' ? '/*' : regex;
  return '/*';
}

/** Up to two domains, ports dropped and short forms of the same host collapsed, then `+ N more...`. */
function describeDomains(domains: readonly string[]): string {
  const hosts = [...new Set(domains.filter((d) => !/:\d+$/.test(d) || d.startsWith('[')))];
  const collapsed = hosts.filter((host) => !hosts.some((other) => other !== host && other.startsWith(`${host}.`)));
  const shown = collapsed.slice(0, 2).join(', ');
  return collapsed.length > 2 ? `${shown} + ${collapsed.length - 2} more...` : shown;
}

export interface RouteFilter {
  readonly name?: string;
}

export function filteredRoutes(dump: EnvoyConfigDump, filter: RouteFilter): Json[] {
  return routeConfigsOf(dump)
    .filter((route) => filter.name === undefined || route['name'] === filter.name)
    .sort((a, b) => String(a['name'] ?? '').localeCompare(String(b['name'] ?? '')));
}

/** `NAME  DOMAINS  MATCH  VIRTUAL SERVICE` (verbose, the default), or `NAME  VIRTUAL HOSTS`. */
export function routeSummary(dump: EnvoyConfigDump, filter: RouteFilter, verbose: boolean): string {
  const configs = filteredRoutes(dump, filter);
  if (!verbose)
    return formatTable(
      [['NAME', 'VIRTUAL HOSTS'], ...configs.map((c) => [String(c['name'] ?? ''), String(((c['virtual_hosts'] as Json[] | undefined) ?? []).length)])],
      PADDING,
    );
  const rows: string[][] = [];
  for (const config of configs) {
    for (const host of (config['virtual_hosts'] as Json[] | undefined) ?? []) {
      // The passthrough virtual host of an outbound route is plumbing, not config.
      if (host['name'] === 'allow_any' || host['name'] === 'block_all') continue;
      const routes = (host['routes'] as Json[] | undefined) ?? [];
      const domains = describeDomains((host['domains'] as string[] | undefined) ?? []);
      if (routes.length === 0) rows.push([String(config['name'] ?? ''), domains, '/*', '404']);
      for (const route of routes)
        rows.push([String(config['name'] ?? ''), domains, describeRouteMatch(route), configNameOf(configPathOf(route['metadata'])) ?? '']);
    }
  }
  return formatTable([['NAME', 'DOMAINS', 'MATCH', 'VIRTUAL SERVICE'], ...rows], PADDING);
}

/** `RESOURCE NAME  TYPE  STATUS  VALID CERT  SERIAL NUMBER  NOT AFTER  NOT BEFORE`. */
export function secretSummary(dump: EnvoyConfigDump, now: Date = new Date()): string {
  const rows = secretsOf(dump).flatMap(({ state, entry }) => {
    const secret = (entry['secret'] as Json | undefined) ?? {};
    const name = String(entry['name'] ?? secret['name'] ?? '');
    const chain = (secret['tls_certificate'] as Json | undefined)?.['certificate_chain'] as Json | undefined;
    const ca = (secret['validation_context'] as Json | undefined)?.['trusted_ca'] as Json | undefined;
    const source = chain ?? ca;
    if (!source) return [];
    const pem = typeof source['inline_bytes'] === 'string' ? Buffer.from(source['inline_bytes'], 'base64').toString() : String(source['inline_string'] ?? '');
    const certificate = firstCertificate(pem);
    if (!certificate) return [[name, chain ? 'Cert Chain' : 'CA', state, 'false', '', '', '']];
    const [notBefore, notAfter] = [new Date(certificate.validFrom), new Date(certificate.validTo)];
    const valid = now >= notBefore && now <= notAfter;
    return [
      [name, chain ? 'Cert Chain' : 'CA', state, String(valid), BigInt(`0x${certificate.serialNumber}`).toString(10), rfc3339(notAfter), rfc3339(notBefore)],
    ];
  });
  if (rows.length === 0) return 'No active or warming secrets found.\n';
  return formatTable([['RESOURCE NAME', 'TYPE', 'STATUS', 'VALID CERT', 'SERIAL NUMBER', 'NOT AFTER', 'NOT BEFORE'], ...rows], PADDING);
}

function firstCertificate(pem: string): X509Certificate | undefined {
  const block = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/.exec(pem)?.[0];
  if (!block) return undefined;
  try {
    return new X509Certificate(block);
  } catch {
    return undefined;
  }
}

function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface EndpointFilter {
  readonly address?: string;
  readonly port?: number;
  readonly cluster?: string;
  readonly status?: string;
}

/** `ENDPOINT  STATUS  OUTLIER CHECK  CLUSTER`, from `/clusters?format=json`. */
export function endpointSummary(clusters: unknown, filter: EndpointFilter): string {
  const statuses = (clusters as { cluster_statuses?: unknown } | null)?.cluster_statuses;
  if (!Array.isArray(statuses)) throw new MeshError('proxy-config-failed', 'not the output of the proxy\'s /clusters?format=json: no "cluster_statuses"');
  const rows: string[][] = [];
  for (const cluster of statuses as Json[]) {
    for (const host of (cluster['host_statuses'] as Json[] | undefined) ?? []) {
      const socket = ((host['address'] as Json | undefined)?.['socket_address'] as Json | undefined) ?? {};
      const address = String(socket['address'] ?? '');
      const port = Number(socket['port_value'] ?? 0);
      const health = (host['health_status'] as Json | undefined) ?? {};
      const status = String(health['eds_health_status'] ?? 'HEALTHY');
      const name = String(cluster['name'] ?? '');
      if (filter.address !== undefined && address !== filter.address) continue;
      if (filter.port !== undefined && port !== filter.port) continue;
      if (filter.cluster !== undefined && name !== filter.cluster) continue;
      if (filter.status !== undefined && status !== filter.status) continue;
      rows.push([`${address}:${port}`, status, health['failed_outlier_check'] === true ? 'FAILED' : 'OK', name]);
    }
  }
  rows.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? '') || (a[3] ?? '').localeCompare(b[3] ?? ''));
  return formatTable([['ENDPOINT', 'STATUS', 'OUTLIER CHECK', 'CLUSTER'], ...rows], PADDING);
}
