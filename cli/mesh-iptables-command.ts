import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { MeshError } from '../controllers/runtime/index.js';
import {
  DEFAULT_INBOUND_CAPTURE_PORT,
  DEFAULT_INBOUND_TUNNEL_PORT,
  DEFAULT_PROBE_PORT,
  DEFAULT_PROBE_TIMEOUT_MS,
  DEFAULT_PROXY_PORT,
  RESOLV_CONF_PATH,
  applyIptablesRules,
  buildCleanupCommands,
  buildIptablesRules,
  captureConfigFromFlags,
  cleanupConfigFromFlags,
  formatArgs,
  newProcessRunner,
  parsePort,
  parseResolvConf,
  renderCommandList,
  renderRestoreOutput,
  runCleanup,
  validateInterception,
  type CaptureFlagValues,
  type CleanupFlagValues,
  type CommandRunner,
} from '../agent/index.js';
import { boolOption, describeDuration, durationFlag } from './flags.js';
import type { CliIo } from './run-cli.js';

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

interface MeshIptablesOptions extends CaptureFlagValues {
  dryRun: boolean;
  iptablesProbePort: string;
  probeTimeout: number;
  restoreFormat: boolean;
  runValidation: boolean;
  skipRuleApply: boolean;
  redirectDns: boolean;
  captureAllDns: boolean;
}

interface MeshCleanIptablesOptions extends CleanupFlagValues {
  dryRun: boolean;
  redirectDns: boolean;
}

const readSystemResolvConf = (): Promise<string> => readFile(RESOLV_CONF_PATH, 'utf8');

/** `pilot-agent mesh-iptables`: builds the capture rules, prints them, applies them, optionally validates. */
export function newMeshIptablesCommand(io: CliIo, deps: MeshIptablesDeps = {}): Command {
  const d = deps.defaults ?? {};
  const proxyPort = d.proxyPort ?? String(DEFAULT_PROXY_PORT);
  const capturePort = d.inboundCapturePort ?? String(DEFAULT_INBOUND_CAPTURE_PORT);
  const tunnelPort = d.inboundTunnelPort ?? String(DEFAULT_INBOUND_TUNNEL_PORT);
  const localExclude = d.localExcludePorts ?? '';
  const serviceExclude = d.serviceExcludeCidr ?? '';
  const string = (flags: string, description: string): Option => new Option(`${flags} <string>`, description);
  return new Command('mesh-iptables')
    .description('Set up port forwarding for the sidecar')
    .addOption(
      boolOption(
        '--capture-all-dns',
        'Instead of only capturing DNS traffic to DNS server IP, capture all DNS traffic at port 53. This setting is only effective when redirect dns is enabled.',
        false,
      ),
    )
    .addOption(boolOption('-n, --dry-run', 'Do not call any external dependencies like iptables', false))
    .addOption(
      string('-p, --proxy-port', 'Specify the proxy port to which redirect all TCP traffic').default(proxyPort, `$PROXY_PORT = ${proxyPort}`),
    )
    .addOption(
      string('-z, --inbound-capture-port', 'Port to which all inbound TCP traffic to the pod/VM should be redirected to').default(
        capturePort,
        `$INBOUND_CAPTURE_PORT = ${capturePort}`,
      ),
    )
    .addOption(
      string('-e, --inbound-tunnel-port', 'Specify the mesh tunnel port for inbound tcp traffic').default(
        tunnelPort,
        `$INBOUND_TUNNEL_PORT = ${tunnelPort}`,
      ),
    )
    .addOption(string('--iptables-probe-port', 'set listen port for failure detection').default(String(DEFAULT_PROBE_PORT)))
    .addOption(string('-m, --mesh-inbound-interception-mode', 'The mode used to redirect inbound connections to the proxy, either "REDIRECT" or "TPROXY"'))
    .addOption(
      string(
        '-b, --mesh-inbound-ports',
        'Comma separated list of inbound ports for which traffic is to be redirected to the proxy (optional). The wildcard character "*" can be used to configure redirection for all ports. An empty list will disable',
      ),
    )
    .addOption(string('-t, --mesh-inbound-tproxy-mark', 'Firewall mark of TPROXY-captured inbound packets (empty: 1337)'))
    .addOption(string('-r, --mesh-inbound-tproxy-route-table', 'Routing table that sends TPROXY-marked packets to lo (empty: 133)'))
    .addOption(
      string(
        '-d, --mesh-local-exclude-ports',
        'Comma separated list of inbound ports to be excluded from redirection to the proxy (optional). Only applies when all inbound traffic (i.e. "*") is being redirected',
      ).default(localExclude, `$MESH_LOCAL_EXCLUDE_PORTS = "${localExclude}"`),
    )
    .addOption(string('-o, --mesh-local-outbound-ports-exclude', 'Comma separated list of outbound ports to be excluded from redirection to the proxy'))
    .addOption(string('-q, --mesh-outbound-ports', 'Comma separated list of outbound ports to be explicitly included for redirection to the proxy'))
    .addOption(
      string(
        '-i, --mesh-service-cidr',
        'Comma separated list of IP ranges in CIDR form to redirect to the proxy (optional). The wildcard character "*" can be used to redirect all outbound traffic. An empty list will disable all outbound',
      ),
    )
    .addOption(
      string(
        '-x, --mesh-service-exclude-cidr',
        'Comma separated list of IP ranges in CIDR form to be excluded from redirection. Only applies when all outbound traffic (i.e. "*") is being redirected',
      ).default(serviceExclude, `$MESH_SERVICE_EXCLUDE_CIDR = "${serviceExclude}"`),
    )
    .addOption(
      string('-k, --orch-virt-interfaces', 'Comma separated list of virtual interfaces whose inbound traffic (from VM) will be treated as outbound'),
    )
    .addOption(
      new Option('--probe-timeout <duration>', 'failure detection timeout')
        .argParser(durationFlag)
        .default(DEFAULT_PROBE_TIMEOUT_MS, describeDuration(DEFAULT_PROBE_TIMEOUT_MS)),
    )
    .addOption(string('-g, --proxy-gid', 'Specify the GID of the user for which the redirection is not applied. (same default value as -u param)'))
    .addOption(
      string(
        '-u, --proxy-uid',
        'Specify the UID of the user for which the redirection is not applied. Typically, this is the UID of the proxy container (empty: 1337)',
      ),
    )
    .addOption(boolOption('--redirect-dns', 'Enable capture of dns traffic by the agent', d.redirectDns ?? false))
    .addOption(boolOption('-f, --restore-format', 'Print iptables rules in iptables-restore interpretable format', false))
    .addOption(boolOption('--run-validation', 'Validate iptables', false))
    .addOption(boolOption('--skip-rule-apply', 'Skip iptables apply', false))
    .action((options: MeshIptablesOptions) => runMeshIptables(options, io, deps));
}

async function runMeshIptables(options: MeshIptablesOptions, io: CliIo, deps: MeshIptablesDeps): Promise<void> {
  // Every flag is checked before anything is read or run.
  let config = captureConfigFromFlags(options);
  const probePort = parsePort('--iptables-probe-port', options.iptablesProbePort);
  if (config.redirectDns && !config.captureAllDns) {
    const nameServers = await readNameServers(deps);
    config = captureConfigFromFlags(options, nameServers);
    if (nameServers.length === 0) {
      io.stderr(`warning: --redirect-dns is set without --capture-all-dns, and ${RESOLV_CONF_PATH} lists no name server: DNS is not captured\n`);
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
    throw new MeshError('resolv_conf_unreadable', `cannot read name servers from ${RESOLV_CONF_PATH}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** `pilot-agent mesh-clean-iptables`: removes what `mesh-iptables` set up; absent rules are no error. */
export function newMeshCleanIptablesCommand(io: CliIo, deps: MeshIptablesDeps = {}): Command {
  return new Command('mesh-clean-iptables')
    .description('Clean up iptables rules set up by mesh-iptables')
    .addOption(boolOption('-n, --dry-run', 'Do not call any external dependencies like iptables', false))
    .addOption(
      new Option('-g, --proxy-gid <string>', 'Specify the GID of the user for which the redirection is not applied. (same default value as -u param)'),
    )
    .addOption(
      new Option(
        '-u, --proxy-uid <string>',
        'Specify the UID of the user for which the redirection is not applied. Typically, this is the UID of the proxy container (empty: 1337)',
      ),
    )
    .addOption(boolOption('--redirect-dns', 'Enable capture of dns traffic by the agent', deps.defaults?.redirectDns ?? false))
    .action(async (options: MeshCleanIptablesOptions) => {
      let config = cleanupConfigFromFlags(options);
      if (config.redirectDns) {
        try {
          config = cleanupConfigFromFlags(options, parseResolvConf(await (deps.readResolvConf ?? readSystemResolvConf)()));
        } catch (error) {
          // Clean-up is best effort: the rules for all DNS are removed in any case.
          io.stderr(`warning: cannot read name servers from ${RESOLV_CONF_PATH}: ${(error as Error).message}\n`);
        }
      }
      const commands = buildCleanupCommands(config);
      if (options.dryRun) {
        io.stdout(commands.map((argv) => `${formatArgs(argv)}\n`).join(''));
        return;
      }
      const { ran, failed } = await runCleanup(config, deps.run ?? newProcessRunner());
      io.stdout(`mesh iptables rules removed (${failed} of ${ran} clean-up commands found nothing to remove)\n`);
    });
}
