import { Command } from 'commander';
import { stringify } from 'yaml';
import { errorMessage, type BuildInfo } from '../../runtime/index.js';
import type { MeshctlFlagDefaults } from './meshctl-defaults.js';
import { boolOption } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';
import { ensureNewline, renderVersion, versionOptions, type VersionOptions } from '../version-command.js';

/** The daemon's self-monitoring port, where it serves `/version`. */
const MONITORING_PORT = 15014;
/** Each daemon's own deadline: one unreachable daemon must not hold the others' answers. */
const PER_DAEMON_TIMEOUT_MS = 10_000;

interface MeshctlVersionOptions extends VersionOptions {
  remote: boolean;
  revision: string;
}

interface RemoteVersion {
  url: string;
  info?: BuildInfo;
  problem?: string;
}

/**
 * `meshctl version`: the client's version and, with `--remote` (the default), every running
 * daemon's (through the orchestrator's pod proxy) and the proxies' versions the daemons report.
 * With an xds-address default (MESHCTL_XDS_ADDRESS or MESHCONFIG), the daemon at that host is asked directly instead.
 */
export function newMeshctlVersionCommand(deps: { io: CliIo; defaults: MeshctlFlagDefaults; buildInfo: () => BuildInfo }): Command {
  const command = versionOptions(new Command('version').description('Prints out build version information'), true)
    .addOption(boolOption('--remote', 'Use --remote=false to suppress control plane check', true))
    .option('-r, --revision <string>', 'Control plane revision', '');
  return command.action(async (options: MeshctlVersionOptions, self: Command) => {
    const client = deps.buildInfo();
    if (options.remote && deps.defaults.string('xds-address').trim() === '') {
      await clusterVersion(deps.io, client, options, self.optsWithGlobals<MeshctlGlobalFlags>());
      return;
    }
    const remote = options.remote ? await fetchDaemonVersion(daemonVersionUrl(deps.defaults.string('xds-address'))) : undefined;
    deps.io.stdout(ensureNewline(render(client, remote, options)));
    if (remote?.problem) {
      deps.io.stderr(`control plane version unavailable: ${remote.problem}\n`);
    }
  });
}

/**
 * The reference's remote path: a missing cluster or daemon is told on stderr and the client
 * version still printed (exit 0); daemons that did not answer are named, the others shown.
 */
async function clusterVersion(io: CliIo, client: BuildInfo, options: MeshctlVersionOptions, global: MeshctlGlobalFlags): Promise<void> {
  const meshctl = await import('../../meshctl/index.js');
  const format = { ...(options.output !== undefined ? { output: options.output } : {}), short: options.short };
  const query = { meshNamespace: global.meshNamespace, revision: options.revision, timeoutMs: PER_DAEMON_TIMEOUT_MS };
  let servers: readonly import('../../meshctl/index.js').ServerInfo[] | undefined;
  let dataPlane: readonly import('../../meshctl/index.js').ProxyInfo[] | undefined;
  try {
    const kubeConfig = await meshctl.loadKubeClient(global);
    const versions = await meshctl.fetchMeshVersions(kubeConfig, query);
    for (const failure of versions.failures) io.stderr(`${failure}\n`);
    if (versions.servers === undefined) io.stderr(`mesh is not present in the cluster with namespace "${global.meshNamespace}"\n`);
    else if (versions.servers.length > 0) {
      servers = versions.servers;
      dataPlane = await meshctl.fetchProxyVersions(kubeConfig, query);
    }
  } catch (error) {
    io.stderr(`${errorMessage(error)}\n`);
  }
  io.stdout(meshctl.renderVersionReport({ client, ...(servers ? { servers } : {}), ...(dataPlane ? { dataPlane } : {}) }, format));
}

/** The daemon host comes from the xds-address default (MESHCTL_XDS_ADDRESS or MESHCONFIG: host or host:port), else localhost. */
export function daemonVersionUrl(xdsAddress: string): string {
  const address = xdsAddress.trim();
  let host = 'localhost';
  if (address !== '') {
    const bracketed = /^\[([^\]]+)\]/.exec(address);
    host = bracketed ? `[${bracketed[1]}]` : (address.split(':')[0] ?? 'localhost');
  }
  return `http://${host}:${MONITORING_PORT}/version`;
}

async function fetchDaemonVersion(url: string): Promise<RemoteVersion> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    if (!response.ok) return { url, problem: `${url} answered ${response.status}` };
    return { url, info: (await response.json()) as BuildInfo };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return { url, problem: `no daemon answered at ${url} (${cause?.code ?? errorMessage(error)})` };
  }
}

function render(client: BuildInfo, remote: RemoteVersion | undefined, options: MeshctlVersionOptions): string {
  if (options.output) {
    const document = {
      clientVersion: client,
      ...(remote ? { meshVersion: remote.info ? [{ Component: 'pilot', Revision: options.revision || 'default', Info: remote.info }] : [] } : {}),
    };
    return options.output === 'json' ? JSON.stringify(document, null, 2) : stringify(document);
  }
  if (!remote) return renderVersion(client, options);
  const clientLine = `client version: ${renderVersion(client, options).trim()}`;
  const remoteLine = `control plane version: ${remote.info ? renderVersion(remote.info, options).trim() : 'unavailable'}`;
  return `${clientLine}\n${remoteLine}`;
}
