import { compileCidrRanges, type CidrRangeConfig } from './cidr.js';
import type { ConnectionFacts } from './facts.js';

/** `envoy.config.listener.v3.FilterChainMatch` (the fields the daemon uses and a few more). */
export interface FilterChainMatchConfig {
  destination_port?: number | { value: number };
  prefix_ranges?: CidrRangeConfig[];
  server_names?: string[];
  transport_protocol?: string;
  application_protocols?: string[];
  source_prefix_ranges?: CidrRangeConfig[];
}

export interface FilterChainLike {
  name?: string;
  filter_chain_match?: FilterChainMatchConfig;
}

interface Candidate<T> {
  readonly chain: T;
  readonly match: FilterChainMatchConfig;
}

/**
 * One level of Envoy's filter chain match tree: candidates whose criterion matches, with the best
 * score, win; only when none does, the candidates that leave the criterion empty go on. Envoy
 * never backtracks to the empty set once a specific value matched.
 */
type Level = <T>(candidates: Candidate<T>[], connection: ConnectionFacts) => Candidate<T>[];

function narrow<T>(candidates: Candidate<T>[], score: (match: FilterChainMatchConfig) => number | 'unset'): Candidate<T>[] {
  let best = -1;
  let winners: Candidate<T>[] = [];
  const unset: Candidate<T>[] = [];
  for (const candidate of candidates) {
    const value = score(candidate.match);
    if (value === 'unset') unset.push(candidate);
    else if (value > best) {
      best = value;
      winners = [candidate];
    } else if (value === best && value >= 0) winners.push(candidate);
  }
  return best >= 0 ? winners : unset;
}

function portOf(match: FilterChainMatchConfig): number | undefined {
  const port = match.destination_port;
  return port === undefined ? undefined : typeof port === 'number' ? port : port.value;
}

function prefixScore(ranges: CidrRangeConfig[] | undefined, address: string): number | 'unset' {
  if (!ranges || ranges.length === 0) return 'unset';
  let best = -1;
  for (const range of ranges) {
    if (!compileCidrRanges([range])(address)) continue;
    const length = typeof range.prefix_len === 'number' ? range.prefix_len : (range.prefix_len?.value ?? 0);
    best = Math.max(best, length);
  }
  return best;
}

/** Exact names score highest, then wildcards `*.a.b` by the length of the suffix. */
function serverNameScore(names: string[] | undefined, serverName: string | undefined): number | 'unset' {
  if (!names || names.length === 0) return 'unset';
  if (serverName === undefined || serverName === '') return -1;
  const sni = serverName.toLowerCase();
  let best = -1;
  for (const name of names.map((n) => n.toLowerCase())) {
    if (name === sni) best = Math.max(best, 1_000_000);
    else if (name.startsWith('*.') && sni.endsWith(name.slice(1))) best = Math.max(best, name.length);
  }
  return best;
}

const LEVELS: readonly Level[] = [
  (candidates, connection) =>
    narrow(candidates, (match) => {
      const port = portOf(match);
      return port === undefined ? 'unset' : port === connection.destinationPort ? 0 : -1;
    }),
  (candidates, connection) => narrow(candidates, (match) => prefixScore(match.prefix_ranges, connection.destinationAddress)),
  (candidates, connection) => narrow(candidates, (match) => serverNameScore(match.server_names, connection.serverName)),
  (candidates, connection) =>
    narrow(candidates, (match) =>
      match.transport_protocol === undefined || match.transport_protocol === '' ? 'unset' : match.transport_protocol === connection.transportProtocol ? 0 : -1,
    ),
  (candidates, connection) =>
    narrow(candidates, (match) => {
      const wanted = match.application_protocols ?? [];
      if (wanted.length === 0) return 'unset';
      return wanted.some((protocol) => connection.applicationProtocols?.includes(protocol)) ? 0 : -1;
    }),
  (candidates, connection) => narrow(candidates, (match) => prefixScore(match.source_prefix_ranges, connection.sourceAddress)),
];

/**
 * The filter chain Envoy picks for a connection, or undefined when none matches (the connection
 * is reset, or goes to the listener's default chain).
 */
export function selectFilterChain<T extends FilterChainLike>(chains: readonly T[], connection: ConnectionFacts): T | undefined {
  let candidates: Candidate<T>[] = chains.map((chain) => ({ chain, match: chain.filter_chain_match ?? {} }));
  for (const level of LEVELS) {
    candidates = level(candidates, connection);
    if (candidates.length === 0) return undefined;
  }
  return candidates[0]?.chain;
}
