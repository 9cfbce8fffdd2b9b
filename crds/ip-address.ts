import { isIP } from 'node:net';

/** An IPv4 or IPv6 address without a zone or prefix. */
export function isIpAddress(value: string): boolean {
  return !value.includes('%') && isIP(value) !== 0;
}

/** A CIDR range such as `10.0.0.0/16` or `2001:db8::/32`, with a prefix length that fits the family. */
export function isCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0 || slash !== value.lastIndexOf('/')) return false;
  const address = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(bits) || (bits.length > 1 && bits.startsWith('0'))) return false;
  const family = isIpAddress(address) ? isIP(address) : 0;
  if (family === 0) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** An address or a CIDR range: what ipBlocks, remoteIpBlocks and the `source.ip` condition take. */
export function isIpOrCidr(value: string): boolean {
  return value.includes('/') ? isCidr(value) : isIpAddress(value);
}
