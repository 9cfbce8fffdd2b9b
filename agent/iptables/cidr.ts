import { isIPv4, isIPv6 } from 'node:net';

export type IpFamily = 'ipv4' | 'ipv6';

/** A parsed CIDR; `text` is the canonical network form (`10.1.2.3/8` becomes `10.0.0.0/8`). */
export interface Cidr {
  readonly family: IpFamily;
  readonly text: string;
  /** The address as written is a loopback address (127.0.0.0/8 or ::1). */
  readonly isLoopback: boolean;
}

/** Parses `address/prefix`; returns undefined when it is not a CIDR. */
export function parseCidr(value: string): Cidr | undefined {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(value.trim());
  if (!match) return undefined;
  const address = match[1] as string;
  const prefix = Number(match[2]);
  if (isIPv4(address)) {
    if (prefix > 32) return undefined;
    const bytes = address.split('.').map(Number);
    return { family: 'ipv4', text: `${maskBytes(bytes, prefix).join('.')}/${prefix}`, isLoopback: bytes[0] === 127 };
  }
  if (isIPv6(address) && !address.includes('%')) {
    if (prefix > 128) return undefined;
    const bytes = ipv6Bytes(address);
    const isLoopback = bytes.slice(0, 15).every((b) => b === 0) && bytes[15] === 1;
    return { family: 'ipv6', text: `${formatIpv6(maskBytes(bytes, prefix))}/${prefix}`, isLoopback };
  }
  return undefined;
}

/** The family of a plain address, or undefined when it is not one. */
export function addressFamily(value: string): IpFamily | undefined {
  if (isIPv4(value)) return 'ipv4';
  if (isIPv6(value) && !value.includes('%')) return 'ipv6';
  return undefined;
}

function maskBytes(bytes: readonly number[], prefix: number): number[] {
  return bytes.map((byte, index) => {
    const bits = Math.max(0, Math.min(8, prefix - index * 8));
    return byte & ((0xff << (8 - bits)) & 0xff);
  });
}

/** The 16 bytes of a valid IPv6 address (an embedded dotted quad included). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = (dotted[1] as string).split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array<string>(zeros).fill('0'), ...tailGroups].map((g) => Number.parseInt(g, 16));
  return groups.flatMap((group) => [group >> 8, group & 0xff]);
}

/** RFC 5952 text: lower case, no leading zeros, the longest run of two or more zero groups as `::`. */
function formatIpv6(bytes: readonly number[]): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] as number) << 8) | (bytes[i + 1] as number));
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8;) {
    let end = start;
    while (end < 8 && groups[end] === 0) end++;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end === start ? start + 1 : end;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
