import { stringify } from 'yaml';
import { formatBuildInfo, type BuildInfo } from '../../runtime/index.js';
import type { ProxyInfo, ServerInfo } from './mesh-versions.js';

export interface VersionReport {
  readonly client: BuildInfo;
  /** The daemons' versions; undefined when not asked (`--remote=false`) or not present. */
  readonly servers?: readonly ServerInfo[];
  /** The proxies' versions; undefined when not asked or not readable. */
  readonly dataPlane?: readonly ProxyInfo[];
}

export interface VersionFormat {
  readonly output?: 'yaml' | 'json';
  readonly short: boolean;
}

/**
 * The reference's `version` output: `-o json|yaml` the document `{clientVersion, meshVersion,
 * dataPlaneVersion}`; short: the client version alone, or `client version: X` and one line per
 * daemon (`control plane version: X` when all agree), then `data plane version: X (n proxies), …`;
 * long: the same lines with the full build information.
 */
export function renderVersionReport(report: VersionReport, format: VersionFormat): string {
  if (format.output !== undefined) {
    const document = {
      clientVersion: report.client,
      ...(report.servers !== undefined ? { meshVersion: report.servers } : {}),
      ...(report.dataPlane !== undefined ? { dataPlaneVersion: report.dataPlane } : {}),
    };
    return format.output === 'json' ? `${JSON.stringify(document, null, 2)}\n` : `${stringify(document)}\n`;
  }
  const form = (info: BuildInfo): string => formatBuildInfo(info, format.short ? 'short' : 'long');
  const lines: string[] = [];
  if (report.servers !== undefined && report.servers.length > 0) {
    lines.push(`client version: ${form(report.client)}`);
    for (const server of format.short ? coalesce(report.servers) : report.servers) lines.push(`${server.Component} version: ${form(server.Info)}`);
  } else {
    lines.push(form(report.client));
  }
  if (report.dataPlane !== undefined) {
    if (format.short) lines.push(`data plane version: ${renderProxyVersions(report.dataPlane)}`);
    else
      for (const proxy of report.dataPlane)
        lines.push(`data plane version: version.ProxyInfo{ID:${JSON.stringify(proxy.ID)}, MeshVersion:${JSON.stringify(proxy.MeshVersion)}}`);
  }
  return `${lines.join('\n')}\n`;
}

/** One `control plane` line when every daemon runs the same version (other build fields may differ). */
function coalesce(servers: readonly ServerInfo[]): readonly ServerInfo[] {
  const first = servers[0];
  if (first === undefined || servers.some((server) => server.Info.version !== first.Info.version)) return servers;
  return [{ ...first, Component: 'control plane' }];
}

/** `1.2.0 (3 proxies), 1.3.0 (1 proxies)`, versions sorted; `none` without proxies. */
export function renderProxyVersions(proxies: readonly ProxyInfo[]): string {
  if (proxies.length === 0) return 'none';
  const counts = new Map<string, number>();
  for (const proxy of proxies) counts.set(proxy.MeshVersion, (counts.get(proxy.MeshVersion) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([version, count]) => `${version} (${count} proxies)`)
    .join(', ');
}
