import { stringify } from 'yaml';
import { formatBuildInfo, type BuildInfo } from '../../runtime/index.js';
import type { EnvoyProtos } from '../../xds/envoy/index.js';
import type { XdsResponse } from './xds-query.js';
import { controlPlaneOf, proxiesOfSyncz } from './xds-syncz.js';

/** `x version -o json|yaml`: the client, each daemon that answered, each proxy they serve. */
export interface XdsVersionReport {
  readonly clientVersion: BuildInfo;
  readonly meshVersion?: readonly { Component: string; ID: string; Revision: string; Info: Record<string, unknown> }[];
  readonly dataPlaneVersion?: readonly { ID: string; MeshVersion: string }[];
}

const UNKNOWN = 'unknown';

/** The report over the daemons' syncz answers; without answers (`--remote=false`), the client only. */
export function buildXdsVersionReport(
  protos: EnvoyProtos,
  client: BuildInfo,
  answers: ReadonlyMap<string, XdsResponse> | undefined,
  revision: string,
): XdsVersionReport {
  if (!answers) return { clientVersion: client };
  const meshVersion = [...answers.values()].map((response) => {
    const identity = controlPlaneOf(response);
    return { Component: identity.component, ID: identity.id, Revision: revision || 'default', Info: identity.info ?? { version: UNKNOWN } };
  });
  const dataPlaneVersion = [...answers.values()]
    .flatMap((response) => proxiesOfSyncz(protos, response))
    .map((proxy) => ({ ID: proxy.proxy, MeshVersion: proxy.meshVersion ?? UNKNOWN }))
    .sort((a, b) => a.ID.localeCompare(b.ID));
  return { clientVersion: client, meshVersion, dataPlaneVersion };
}

const versionOf = (info: Record<string, unknown>): string => (typeof info['version'] === 'string' ? info['version'] : UNKNOWN);

/** `1.2.0 (3 proxies), 1.1.0 (1 proxies)`, most proxies first; `none` without proxies. */
function dataPlaneLine(proxies: readonly { MeshVersion: string }[]): string {
  const counts = new Map<string, number>();
  for (const proxy of proxies) counts.set(proxy.MeshVersion, (counts.get(proxy.MeshVersion) ?? 0) + 1);
  const groups = [...counts].sort(([va, a], [vb, b]) => b - a || va.localeCompare(vb));
  return groups.length === 0 ? 'none' : groups.map(([version, count]) => `${version} (${count} proxies)`).join(', ');
}

/**
 * The reference's version printer: `client version: X`, then `control plane version: X` when every
 * daemon runs one version (else `<daemon> version: X` each), then the data plane versions grouped.
 * `--short=false` prints the client's build information in full and one line per proxy.
 */
export function renderXdsVersion(report: XdsVersionReport, options: { short: boolean; output?: 'json' | 'yaml' }): string {
  if (options.output === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  if (options.output === 'yaml') return stringify(report);
  const lines = [`client version: ${formatBuildInfo(report.clientVersion, options.short ? 'short' : 'long')}`];
  if (report.meshVersion) {
    const versions = new Set(report.meshVersion.map((daemon) => versionOf(daemon.Info)));
    if (options.short && versions.size === 1) lines.push(`control plane version: ${[...versions][0] ?? UNKNOWN}`);
    else for (const daemon of report.meshVersion) lines.push(`${daemon.ID} version: ${options.short ? versionOf(daemon.Info) : JSON.stringify(daemon.Info)}`);
  }
  if (report.dataPlaneVersion) {
    if (options.short) lines.push(`data plane version: ${dataPlaneLine(report.dataPlaneVersion)}`);
    else for (const proxy of report.dataPlaneVersion) lines.push(`data plane version: ${proxy.ID}: ${proxy.MeshVersion}`);
  }
  return `${lines.join('\n')}\n`;
}
