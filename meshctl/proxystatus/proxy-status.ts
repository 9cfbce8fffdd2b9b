import { createTwoFilesPatch } from 'diff';
import { MeshError } from '../../runtime/index.js';
import { formatTable } from '../kube/table.js';
import { clustersOf, listenersOf, routeConfigsOf, dumpOf, type EnvoyConfigDump, type Json } from '../proxyconfig/config-dump.js';

/** proxy-status could not get what it needs from the daemons. */
export class ProxyStatusError extends MeshError<'proxy-config-failed'> {
  constructor(message: string) {
    super('proxy-config-failed', message);
  }
}

/** One proxy as a daemon's `/debug/syncz` lists it. */
export interface SynczEntry {
  readonly proxy: string;
  readonly clusterId?: string;
  readonly meshVersion?: string;
  readonly types: readonly { readonly type: string; readonly status: string }[];
}

const COLUMNS = ['CDS', 'LDS', 'EDS', 'RDS', 'ECDS'] as const;

/** The reference's status words: a type never sent is `NOT SENT`, one not subscribed `IGNORED`. */
function statusWord(entry: SynczEntry, type: string): string {
  const found = entry.types.find((t) => t.type.toUpperCase() === type);
  if (!found) return type === 'ECDS' ? 'IGNORED' : 'NOT SENT';
  switch (found.status) {
    case 'SYNCED':
      return 'SYNCED';
    case 'NOT_SENT':
      return 'NOT SENT';
    case 'UNKNOWN':
      return 'IGNORED';
    default:
      return 'STALE';
  }
}

/** Parses one daemon's `/debug/syncz`, naming the daemon when it is not what a daemon answers. */
export function parseSyncz(daemon: string, body: string): SynczEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new MeshError('proxy-config-failed', `${daemon}: /debug/syncz is not JSON`);
  }
  if (!Array.isArray(parsed)) throw new MeshError('proxy-config-failed', `${daemon}: /debug/syncz is not a list of proxies`);
  return parsed as SynczEntry[];
}

/** `NAME  CLUSTER  CDS  LDS  EDS  RDS  ECDS  MESHD  VERSION`, sorted by cluster then proxy. */
export function statusTable(byDaemon: ReadonlyMap<string, readonly SynczEntry[]>): string {
  const rows = [...byDaemon].flatMap(([daemon, entries]) =>
    entries.map((entry) => [entry.proxy, entry.clusterId ?? '', ...COLUMNS.map((type) => statusWord(entry, type)), daemon, entry.meshVersion ?? '']),
  );
  rows.sort((a, b) => (a[1] ?? '').localeCompare(b[1] ?? '') || (a[0] ?? '').localeCompare(b[0] ?? ''));
  return formatTable([['NAME', 'CLUSTER', ...COLUMNS, 'MESHD', 'VERSION'], ...rows], 5);
}

/** Config compared without what differs by nature between sender and receiver (times, versions). */
function canonical(items: readonly Json[]): string {
  const sortKeys = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sortKeys);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Json)[key])]),
    );
  };
  const named = [...items].sort((a, b) => String(a['name'] ?? '').localeCompare(String(b['name'] ?? '')));
  return `${JSON.stringify(sortKeys(named), null, 2)}\n`;
}

function compare(title: string, daemon: readonly Json[], proxy: readonly Json[], matchSuffix = ''): string {
  const [before, after] = [canonical(daemon), canonical(proxy)];
  if (before === after) return `${title} Match${matchSuffix}\n`;
  const patch = createTwoFilesPatch(`Meshd ${title}`, `Proxy ${title}`, before, after, '', '', { context: 3 }).split('\n').slice(1).join('\n');
  return `${title} Don't Match${matchSuffix}\n${patch}`;
}

/**
 * `proxy-status <pod>`: what the daemon last sent the proxy against what the proxy holds, per
 * kind: `Clusters Match`, or `Clusters Don't Match` and a unified diff (daemon first), then
 * listeners and routes (with when the proxy last loaded its routes).
 */
export function compareConfigDumps(daemon: EnvoyConfigDump, proxy: EnvoyConfigDump): string {
  const dynamicClusters = (dump: EnvoyConfigDump): Json[] =>
    clustersOf({ configs: [{ ...dumpOf(dump, 'ClustersConfigDump'), static_clusters: [] }] }).filter((c) => Object.keys(c).length > 0);
  const routesLoaded = ((dumpOf(proxy, 'RoutesConfigDump')['dynamic_route_configs'] as Json[] | undefined) ?? [])
    .map((entry) => String(entry['last_updated'] ?? ''))
    .filter((time) => time !== '')
    .sort()
    .pop();
  const loaded = routesLoaded ? ` (RDS last loaded at ${new Date(routesLoaded).toUTCString()})` : '';
  return [
    compare('Clusters', dynamicClusters(daemon), dynamicClusters(proxy)),
    compare('Listeners', listenersOf(daemon), listenersOf(proxy)),
    compare('Routes', routeConfigsOf(daemon), routeConfigsOf(proxy), loaded),
  ].join('');
}
