import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** `envoy.config.core.v3.CidrRange`. */
export interface CidrRangeConfig {
  address_prefix: string;
  prefix_len?: { value: number } | number;
}

/** Compiles CIDR ranges into one address predicate (an empty list matches nothing). */
export function compileCidrRanges(ranges: readonly CidrRangeConfig[]): (address: string) => boolean {
  const list = new BlockList();
  for (const range of ranges) {
    const family = isIPv4(range.address_prefix) ? 'ipv4' : isIPv6(range.address_prefix) ? 'ipv6' : undefined;
    if (!family) throw new Error(`address_prefix "${range.address_prefix}" is not an IP address`);
    const declared = typeof range.prefix_len === 'number' ? range.prefix_len : range.prefix_len?.value;
    list.addSubnet(range.address_prefix, declared ?? 0, family);
  }
  return (address) => {
    const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
    return family !== undefined && list.check(address, family);
  };
}
