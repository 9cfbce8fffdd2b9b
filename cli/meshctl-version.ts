import { Command } from 'commander';
import { stringify } from 'yaml';
import type { BuildInfo, Settings } from '../controllers/runtime/index.js';
import { boolOption } from './flags.js';
import type { CliIo } from './run-cli.js';
import { ensureNewline, renderVersion, versionOptions, type VersionOptions } from './version-command.js';

/** The daemon's self-monitoring port, where it serves `/version`. */
const MONITORING_PORT = 15014;

interface MeshctlVersionOptions extends VersionOptions {
  remote: boolean;
  revision: string;
}

interface RemoteVersion {
  url: string;
  info?: BuildInfo;
  problem?: string;
}

export function newMeshctlVersionCommand(deps: {
  io: CliIo;
  settings: Settings<'meshctl'>;
  buildInfo: () => BuildInfo;
}): Command {
  const command = versionOptions(new Command('version').description('Prints out build version information'))
    .addOption(boolOption('--remote', 'Use --remote=false to suppress control plane check', true))
    .option('-r, --revision <string>', 'Control plane revision', '');
  return command.action(async (options: MeshctlVersionOptions) => {
    const client = deps.buildInfo();
    const remote = options.remote ? await fetchDaemonVersion(daemonVersionUrl(deps.settings)) : undefined;
    deps.io.stdout(ensureNewline(render(client, remote, options)));
    if (remote?.problem) {
      deps.io.stderr(`control plane version unavailable: ${remote.problem}\n`);
    }
  });
}

/** The daemon host comes from MESHCTL_XDS_ADDRESS (host or host:port), else localhost. */
export function daemonVersionUrl(settings: Settings<'meshctl'>): string {
  const address = settings.get('MESHCTL_XDS_ADDRESS').trim();
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
    return { url, problem: `no daemon answered at ${url} (${cause?.code ?? (error as Error).message})` };
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
