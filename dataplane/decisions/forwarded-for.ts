import { isIP } from 'node:net';
import { compileCidrRanges, type CidrRangeConfig } from './cidr.js';

/** The connection manager fields that decide how it treats `x-forwarded-for` and the trusted `x-envoy-*` headers. */
export interface ForwardedForConfig {
  use_remote_address?: boolean | { value: boolean };
  xff_num_trusted_hops?: number;
  internal_address_config?: { cidr_ranges?: CidrRangeConfig[]; unix_sockets?: boolean };
}

export interface ForwardedForInput {
  /** Request headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The downstream connection's peer address. */
  readonly remoteAddress: string;
  /** This proxy's own address: what it appends in place of a loopback peer. */
  readonly localAddress: string;
}

/** What the connection manager does to the request's headers before its filters see them. */
export interface ForwardedForEdits {
  readonly set: Readonly<Record<string, string>>;
  readonly remove: readonly string[];
}

const XFF = 'x-forwarded-for';
const EXTERNAL_ADDRESS = 'x-envoy-external-address';
const INTERNAL = 'x-envoy-internal';
/** Trusted only from internal peers: removed from every other request. */
const INTERNAL_ONLY = [
  'x-envoy-retry-on',
  'x-envoy-retry-grpc-on',
  'x-envoy-max-retries',
  'x-envoy-upstream-alt-stat-name',
  'x-envoy-upstream-rq-timeout-ms',
  'x-envoy-upstream-rq-per-try-timeout-ms',
  'x-envoy-upstream-rq-timeout-alt-response',
  'x-envoy-expected-rq-timeout-ms',
  'x-envoy-force-trace',
  'x-envoy-ip-tags',
  'x-envoy-hedge-on-per-try-timeout',
];
/** Removed as well from requests that enter the mesh here (edge requests). */
const EDGE_ONLY = ['x-envoy-decorator-operation', 'x-envoy-downstream-service-cluster', 'x-envoy-downstream-service-node', 'x-envoy-original-path'];

function isLoopback(address: string): boolean {
  return isIP(address) === 4 ? address.startsWith('127.') : address === '::1';
}

/** The `n`-th address from the right of `x-forwarded-for` (0: the last), and whether it holds only one. */
function fromForwardedFor(value: string | undefined, hops: number): { address?: string; single: boolean } {
  if (value === undefined) return { single: false };
  const entries = value.split(',').map((entry) => entry.trim());
  const entry = entries[entries.length - 1 - hops];
  return { ...(entry !== undefined && isIP(entry) !== 0 ? { address: entry } : {}), single: entries.length === 1 };
}

/**
 * Envoy's treatment of a request's forwarding headers (its `mutateRequestHeaders`). With
 * `use_remote_address` the peer is the client: it is appended to `x-forwarded-for` (this proxy's
 * own address when the peer is loopback), and a request whose peer is not internal enters here
 * (edge): `x-envoy-external-address` names the peer. Without it, the client is the last
 * `x-forwarded-for` entry. A request is internal when that header then holds one address, and
 * the address is internal: in `internal_address_config`, none without it (Envoy's default since
 * its RFC1918 default was removed). Internal requests are marked `x-envoy-internal: true` (a
 * client's own is always dropped); others lose the `x-envoy-*` headers only a trusted peer may send.
 */
export function compileForwardedFor(config: ForwardedForConfig): (input: ForwardedForInput) => ForwardedForEdits {
  const useRemote = typeof config.use_remote_address === 'object' ? config.use_remote_address.value : config.use_remote_address === true;
  const hops = config.xff_num_trusted_hops ?? 0;
  const isInternal = compileCidrRanges(config.internal_address_config?.cidr_ranges ?? []);
  return ({ headers, remoteAddress, localAddress }) => {
    const set: Record<string, string> = {};
    const remove: string[] = [];
    let client: string | undefined;
    let single: boolean;
    if (useRemote) {
      single = headers[XFF] === undefined;
      if (hops > 0) client = fromForwardedFor(headers[XFF], hops - 1).address;
      client ??= remoteAddress;
      const appended = isLoopback(remoteAddress) ? localAddress : remoteAddress;
      set[XFF] = headers[XFF] === undefined ? appended : `${headers[XFF]},${appended}`;
    } else {
      const last = fromForwardedFor(headers[XFF], hops);
      client = last.address;
      single = last.single;
    }
    const internal = single && client !== undefined && isInternal(client);
    const edge = !internal && useRemote;
    if (internal) set[INTERNAL] = 'true';
    else {
      // Only this proxy says a request is internal.
      if (headers[INTERNAL] !== undefined) remove.push(INTERNAL);
      for (const name of [...INTERNAL_ONLY, ...(edge ? EDGE_ONLY : [])]) if (headers[name] !== undefined) remove.push(name);
    }
    if (edge) set[EXTERNAL_ADDRESS] = client ?? remoteAddress;
    return { set, remove };
  };
}
