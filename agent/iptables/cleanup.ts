import { addressFamily, type IpFamily } from './cidr.js';
import {
  BUILT_IN_CHAINS,
  DEFAULT_PROXY_UID,
  DEFAULT_TPROXY_MARK,
  LOOPBACK_HOST,
  MESH_CHAINS,
  MESH_DIVERT,
  MESH_IN_REDIRECT,
  MESH_INBOUND,
  MESH_OUTPUT,
  MESH_REDIRECT,
  MESH_TPROXY,
  OUTBOUND_MARK,
} from './constants.js';
import { dnsUdpRules, ownerMatches } from './dns-rules.js';
import { parseIdList } from './flag-values.js';
import { iptablesCommand } from './render.js';
import type { CommandRunner } from './command-runner.js';

export interface CleanupConfig {
  readonly proxyUids: readonly string[];
  readonly proxyGids: readonly string[];
  readonly redirectDns: boolean;
  /** Name servers from resolv.conf, whose per-server DNS rules are removed too. */
  readonly nameServers: readonly string[];
}

/** The `mesh-clean-iptables` flag values as commander names them. */
export interface CleanupFlagValues {
  proxyUid?: string;
  proxyGid?: string;
  redirectDns?: boolean;
}

/** Same defaults as `mesh-iptables`: UID 1337 when empty, GID the UID when empty. */
export function cleanupConfigFromFlags(flags: CleanupFlagValues, nameServers: readonly string[] = []): CleanupConfig {
  const uids = parseIdList('--proxy-uid', flags.proxyUid ?? '');
  const gids = parseIdList('--proxy-gid', flags.proxyGid ?? '');
  const proxyUids = uids.length > 0 ? uids : [DEFAULT_PROXY_UID];
  return { proxyUids, proxyGids: gids.length > 0 ? gids : proxyUids, redirectDns: flags.redirectDns ?? false, nameServers };
}

/**
 * The commands that undo `mesh-iptables`, for iptables then ip6tables: the jumps from the built-in
 * chains, the DNS rules (with `--redirect-dns`), the TPROXY marks (with the default mark, the only
 * one we can know here), then our chains flushed and deleted, the ones others jump to last. Each
 * may fail because its rule or chain is absent; the caller ignores those failures.
 */
export function buildCleanupCommands(config: CleanupConfig): string[][] {
  return (['ipv4', 'ipv6'] as const).flatMap((family) => familyCleanup(config, family));
}

function familyCleanup(config: CleanupConfig, family: IpFamily): string[][] {
  const cmd = iptablesCommand(family);
  const commands: string[][] = [];
  const del = (table: string, chain: string, spec: readonly string[]): void => void commands.push([cmd, '-t', table, '-D', chain, ...spec]);

  for (const table of ['nat', 'mangle']) del(table, 'PREROUTING', ['-p', 'tcp', '-j', MESH_INBOUND]);
  del('nat', 'OUTPUT', ['-p', 'tcp', '-j', MESH_OUTPUT]);

  if (config.redirectDns) {
    const nameServers = config.nameServers.filter((server) => addressFamily(server) === family);
    const { proxyUids, proxyGids } = config;
    // Whether the rules were set up for all DNS or per server is not known here: remove both kinds.
    const rules = [
      ...dnsUdpRules({ family, proxyUids, proxyGids, captureAll: false, nameServers }),
      ...dnsUdpRules({ family, proxyUids: [], proxyGids: [], captureAll: true, nameServers: [] }),
    ];
    for (const rule of rules) del(rule.table, rule.chain, rule.spec);
  }

  const mark = DEFAULT_TPROXY_MARK;
  del('mangle', 'PREROUTING', ['-p', 'tcp', '-m', 'mark', '--mark', mark, '-j', 'CONNMARK', '--save-mark']);
  del('mangle', 'OUTPUT', ['-p', 'tcp', '-o', 'lo', '-m', 'mark', '--mark', mark, '-j', 'RETURN']);
  for (const [match, id] of ownerMatches(config.proxyUids, config.proxyGids)) {
    del('mangle', 'OUTPUT', ['!', '-d', LOOPBACK_HOST[family], '-p', 'tcp', '-o', 'lo', '-m', 'owner', match, id, '-j', 'MARK', '--set-mark', OUTBOUND_MARK]);
  }
  del('mangle', 'OUTPUT', ['-p', 'tcp', '-m', 'connmark', '--mark', mark, '-j', 'CONNMARK', '--restore-mark']);

  const flushAndDelete = (table: string, chains: readonly string[]): void => {
    for (const chain of chains) commands.push([cmd, '-t', table, '-F', chain], [cmd, '-t', table, '-X', chain]);
  };
  flushAndDelete('nat', [MESH_OUTPUT, MESH_INBOUND]);
  flushAndDelete('mangle', [MESH_INBOUND, MESH_DIVERT, MESH_TPROXY]);
  flushAndDelete('nat', [MESH_REDIRECT, MESH_IN_REDIRECT]);
  return commands;
}

/**
 * Rules in built-in chains that jump to one of our chains, from `iptables-save` output, as the
 * arguments that delete them. It finds the jumps no flag of `mesh-clean-iptables` describes, such
 * as those for `--orch-virt-interfaces`, which would otherwise keep our chains from being deleted.
 */
export function jumpsToMeshChains(saveOutput: string): string[][] {
  const deletes: string[][] = [];
  let table = '';
  for (const line of saveOutput.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    const match = /^-A (\S+) (.*)$/.exec(line.trim());
    if (!match || line.includes('"')) continue;
    const [chain, spec] = [match[1] as string, (match[2] as string).split(/\s+/)];
    const target = spec[spec.indexOf('-j') + 1] ?? '';
    if (BUILT_IN_CHAINS.has(chain) && (MESH_CHAINS as readonly string[]).includes(target)) deletes.push(['-t', table, '-D', chain, ...spec]);
  }
  return deletes;
}

export interface CleanupOutcome {
  /** Commands run, the jumps found in `iptables-save` output included. */
  readonly ran: number;
  /** Commands that failed, mostly because there was nothing to remove. */
  readonly failed: number;
}

/**
 * Removes our rules for real: for each family, first every jump to our chains that `iptables-save`
 * shows, then the clean-up commands. Failures are counted, not thrown: a rule that is absent needs
 * no removing, and a family whose tools are missing has nothing to clean.
 */
export async function runCleanup(config: CleanupConfig, run: CommandRunner): Promise<CleanupOutcome> {
  let ran = 0;
  let failed = 0;
  const attempt = async (argv: readonly string[]): Promise<void> => {
    ran++;
    if ((await run(argv)).code !== 0) failed++;
  };
  for (const family of ['ipv4', 'ipv6'] as const) {
    const cmd = iptablesCommand(family);
    const saved = await run([`${cmd}-save`]);
    if (saved.code === 0) for (const args of jumpsToMeshChains(saved.stdout)) await attempt([cmd, ...args]);
    for (const argv of familyCleanup(config, family)) await attempt(argv);
  }
  return { ran, failed };
}
