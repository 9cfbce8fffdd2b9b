import type { IpFamily } from './cidr.js';
import { AGENT_DNS_PORT } from './constants.js';
import type { IptablesRule } from './rule-set.js';

export interface DnsUdpOptions {
  readonly family: IpFamily;
  readonly proxyUids: readonly string[];
  readonly proxyGids: readonly string[];
  /** Every port-53 datagram when true; otherwise only those to `nameServers`. */
  readonly captureAll: boolean;
  readonly nameServers: readonly string[];
}

/** `-m owner --uid-owner 1337` and `--gid-owner` pairs for the proxy's ids, UIDs first. */
export function ownerMatches(proxyUids: readonly string[], proxyGids: readonly string[]): Array<[string, string]> {
  return [...proxyUids.map((id): [string, string] => ['--uid-owner', id]), ...proxyGids.map((id): [string, string] => ['--gid-owner', id])];
}

export function hostCidr(family: IpFamily, address: string): string {
  return `${address}/${family === 'ipv4' ? 32 : 128}`;
}

/**
 * The UDP half of DNS capture, shared by set-up (appended) and clean-up (deleted): the proxy's own
 * queries pass; other port-53 datagrams go to the agent; and conntrack zones keep the two legs of
 * a redirected query apart (zone 1: proxy ↔ upstream resolver, zone 2: app ↔ agent), so a reply
 * cannot be matched to the wrong connection.
 */
export function dnsUdpRules(options: DnsUdpOptions): IptablesRule[] {
  const owners = ownerMatches(options.proxyUids, options.proxyGids);
  const servers = options.nameServers.map((server) => hostCidr(options.family, server));
  const toAgent = ['-j', 'REDIRECT', '--to-ports', String(AGENT_DNS_PORT)];
  const rules: IptablesRule[] = [];
  const nat = (...spec: string[]): void => void rules.push({ table: 'nat', chain: 'OUTPUT', spec });
  const raw = (chain: string, ...spec: string[]): void => void rules.push({ table: 'raw', chain, spec });

  for (const [match, id] of owners) nat('-p', 'udp', '--dport', '53', '-m', 'owner', match, id, '-j', 'RETURN');
  if (options.captureAll) nat('-p', 'udp', '--dport', '53', ...toAgent);
  else for (const server of servers) nat('-p', 'udp', '--dport', '53', '-d', server, ...toAgent);

  for (const [match, id] of owners) {
    raw('OUTPUT', '-p', 'udp', '--dport', '53', '-m', 'owner', match, id, '-j', 'CT', '--zone', '1');
    raw('OUTPUT', '-p', 'udp', '--sport', String(AGENT_DNS_PORT), '-m', 'owner', match, id, '-j', 'CT', '--zone', '2');
  }
  if (options.captureAll) {
    raw('OUTPUT', '-p', 'udp', '--dport', '53', '-j', 'CT', '--zone', '2');
    raw('PREROUTING', '-p', 'udp', '--sport', '53', '-j', 'CT', '--zone', '1');
  } else {
    for (const server of servers) {
      raw('OUTPUT', '-p', 'udp', '--dport', '53', '-d', server, '-j', 'CT', '--zone', '2');
      raw('PREROUTING', '-p', 'udp', '--sport', '53', '-s', server, '-j', 'CT', '--zone', '1');
    }
  }
  return rules;
}
