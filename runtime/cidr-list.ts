import { isIPv4, isIPv6 } from 'node:net';

/** One CIDR range as configured: `text` is the entry as written (trimmed), for messages. */
export interface Cidr {
  readonly text: string;
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

export type CidrListParse = { readonly ok: true; readonly cidrs: readonly Cidr[] } | { readonly ok: false; readonly entry: string };

/** An address and a prefix length, as Go's net.ParseCIDR takes them (host bits may be set); no zone. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = text.slice(0, slash);
  const bits = text.slice(slash + 1);
  if (!/^(?:0|[1-9][0-9]{0,2})$/.test(bits)) return undefined;
  const prefix = Number(bits);
  if (isIPv4(address)) return prefix <= 32 ? { text, address, prefix, family: 'ipv4' } : undefined;
  if (isIPv6(address) && !address.includes('%')) return prefix <= 128 ? { text, address, prefix, family: 'ipv6' } : undefined;
  return undefined;
}

/**
 * A comma-separated list of CIDR ranges, as the reference reads BLOCKED_CIDRS_IN_JWKS_URIS:
 * entries trimmed, empty ones skipped. Unlike the reference, which logs a bad entry and drops it,
 * the first bad entry is returned so that start-up can refuse it.
 */
export function parseCidrList(raw: string): CidrListParse {
  const cidrs: Cidr[] = [];
  for (const part of raw.split(',')) {
    const entry = part.trim();
    if (entry === '') continue;
    const cidr = parseCidr(entry);
    if (cidr === undefined) return { ok: false, entry };
    cidrs.push(cidr);
  }
  return { ok: true, cidrs };
}
