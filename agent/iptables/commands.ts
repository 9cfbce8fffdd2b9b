import { readFile } from 'node:fs/promises';
import { errorMessage, MeshError } from '../../runtime/index.js';
import { applyIptablesRules } from './apply-rules.js';
import { buildIptablesRules } from './build-rules.js';
import { captureConfigFromFlags, type CaptureFlagValues } from './capture-config.js';
import { buildCleanupCommands, cleanupConfigFromFlags, runCleanup, type CleanupFlagValues } from './cleanup.js';
import { newProcessRunner, type CommandRunner } from './command-runner.js';
import { parsePort } from './flag-values.js';
import { formatArgs, renderCommandList, renderRestoreOutput } from './render.js';
import { parseResolvConf, RESOLV_CONF_PATH } from './resolv-conf.js';
import { validateInterception } from './validate-interception.js';

/** Where the commands write: the standard output and error of the program. */
export interface CommandOutput {
  stdout(text: string): void;
  stderr(text: string): void;
  /** A warning, through the command's logger. */
  warn(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Defaults the seed takes from the environment (`$PROXY_PORT`, `$MESH_LOCAL_EXCLUDE_PORTS`, …).
 * Only the settings registry reads the environment, so whoever builds the command passes them.
 */
export interface MeshIptablesDefaults {
  proxyPort?: string;
  inboundCapturePort?: string;
  inboundTunnelPort?: string;
  localExcludePorts?: string;
  serviceExcludeCidr?: string;
  redirectDns?: boolean;
}

export interface MeshIptablesDeps {
  /** Runs `ip`, `iptables-restore` and `iptables`; real processes by default. */
  run?: CommandRunner;
  /** Reads resolv.conf for the name servers whose DNS is captured; `/etc/resolv.conf` by default. */
  readResolvConf?: () => Promise<string>;
  defaults?: MeshIptablesDefaults;
}

export interface MeshIptablesOptions extends CaptureFlagValues {
  dryRun: boolean;
  iptablesProbePort: string;
  probeTimeout: number;
  restoreFormat: boolean;
  runValidation: boolean;
  skipRuleApply: boolean;
  redirectDns: boolean;
  captureAllDns: boolean;
}

export interface MeshCleanIptablesOptions extends CleanupFlagValues {
  dryRun: boolean;
  redirectDns: boolean;
}

const readSystemResolvConf = (): Promise<string> => readFile(RESOLV_CONF_PATH, 'utf8');

/** `mesh-iptables`: builds the capture rules, prints them, applies them, optionally validates. Every flag is checked before anything is read or run. */
export async function runMeshIptables(options: MeshIptablesOptions, io: CommandOutput, deps: MeshIptablesDeps): Promise<void> {
  let config = captureConfigFromFlags(options);
  const probePort = parsePort('--iptables-probe-port', options.iptablesProbePort);
  if (config.redirectDns && !config.captureAllDns) {
    const nameServers = await readNameServers(deps);
    config = captureConfigFromFlags(options, nameServers);
    if (nameServers.length === 0) {
      io.warn(`--redirect-dns is set without --capture-all-dns, and ${RESOLV_CONF_PATH} lists no name server: DNS is not captured`);
    }
  }
  if (!options.skipRuleApply) {
    const rules = buildIptablesRules(config);
    io.stdout(options.restoreFormat ? renderRestoreOutput(rules) : renderCommandList(rules));
    if (!options.dryRun) await applyIptablesRules(rules, deps.run ?? newProcessRunner());
  }
  if (options.runValidation) {
    await validateInterception({
      listenPorts: [config.proxyPort, config.inboundCapturePort],
      probePort,
      timeoutMs: options.probeTimeout,
    });
    io.stdout('iptables validation passed\n');
  }
}

async function readNameServers(deps: MeshIptablesDeps): Promise<string[]> {
  try {
    return parseResolvConf(await (deps.readResolvConf ?? readSystemResolvConf)());
  } catch (error) {
    throw new MeshError('resolv-conf-unreadable', `cannot read name servers from ${RESOLV_CONF_PATH}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}

/** `mesh-clean-iptables`: removes what `mesh-iptables` set up; absent rules are no error. */
export async function runMeshCleanIptables(options: MeshCleanIptablesOptions, io: CommandOutput, deps: MeshIptablesDeps): Promise<void> {
  let config = cleanupConfigFromFlags(options);
  if (config.redirectDns) {
    try {
      config = cleanupConfigFromFlags(options, parseResolvConf(await (deps.readResolvConf ?? readSystemResolvConf)()));
    } catch (error) {
      // Clean-up is best effort: the rules for all DNS are removed in any case.
      io.warn(`cannot read name servers from ${RESOLV_CONF_PATH}`, { error: errorMessage(error) });
    }
  }
  const commands = buildCleanupCommands(config);
  if (options.dryRun) {
    io.stdout(commands.map((argv) => `${formatArgs(argv)}\n`).join(''));
    return;
  }
  const { ran, failed } = await runCleanup(config, deps.run ?? newProcessRunner());
  io.stdout(`mesh iptables rules removed (${failed} of ${ran} clean-up commands found nothing to remove)\n`);
}
