import { Command, Option } from 'commander';
import {
  DEFAULT_INBOUND_CAPTURE_PORT,
  DEFAULT_INBOUND_TUNNEL_PORT,
  DEFAULT_PROBE_PORT,
  DEFAULT_PROBE_TIMEOUT_MS,
  DEFAULT_PROXY_PORT,
  runMeshCleanIptables,
  runMeshIptables,
  type MeshCleanIptablesOptions,
  type MeshIptablesDeps,
  type MeshIptablesOptions,
} from '../../agent/index.js';
export type { MeshIptablesDefaults, MeshIptablesDeps } from '../../agent/index.js';
import { boolOption, describeDuration, durationFlag } from '../flags.js';
import type { CliIo } from '../run-cli.js';
import { withCommandLogger } from '../command-logging.js';

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
    .addOption(string('-p, --proxy-port', 'Specify the proxy port to which redirect all TCP traffic').default(proxyPort, `$PROXY_PORT = ${proxyPort}`))
    .addOption(
      string('-z, --inbound-capture-port', 'Port to which all inbound TCP traffic to the pod/VM should be redirected to').default(
        capturePort,
        `$INBOUND_CAPTURE_PORT = ${capturePort}`,
      ),
    )
    .addOption(
      string('-e, --inbound-tunnel-port', 'Specify the mesh tunnel port for inbound tcp traffic').default(tunnelPort, `$INBOUND_TUNNEL_PORT = ${tunnelPort}`),
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
    .addOption(string('-k, --orch-virt-interfaces', 'Comma separated list of virtual interfaces whose inbound traffic (from VM) will be treated as outbound'))
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
    .action((options: MeshIptablesOptions, command: Command) =>
      withCommandLogger(command, io, (log) => runMeshIptables(options, { ...io, warn: (message, fields) => log.warn(fields ?? {}, message) }, deps)),
    );
}

/** `pilot-agent mesh-clean-iptables`: removes what `mesh-iptables` set up; absent rules are no error. */
export function newMeshCleanIptablesCommand(io: CliIo, deps: MeshIptablesDeps = {}): Command {
  return new Command('mesh-clean-iptables')
    .description('Clean up iptables rules set up by mesh-iptables')
    .addOption(boolOption('-n, --dry-run', 'Do not call any external dependencies like iptables', false))
    .addOption(new Option('-g, --proxy-gid <string>', 'Specify the GID of the user for which the redirection is not applied. (same default value as -u param)'))
    .addOption(
      new Option(
        '-u, --proxy-uid <string>',
        'Specify the UID of the user for which the redirection is not applied. Typically, this is the UID of the proxy container (empty: 1337)',
      ),
    )
    .addOption(boolOption('--redirect-dns', 'Enable capture of dns traffic by the agent', deps.defaults?.redirectDns ?? false))
    .action((options: MeshCleanIptablesOptions, command: Command) =>
      withCommandLogger(command, io, (log) => runMeshCleanIptables(options, { ...io, warn: (message, fields) => log.warn(fields ?? {}, message) }, deps)),
    );
}
