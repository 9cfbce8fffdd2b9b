import { BlockList, isIPv6 } from 'node:net';
import type { Cidr } from '../../runtime/index.js';

/** Configured CIDR ranges, matched with Node's BlockList (IPv4, IPv6 and IPv4-mapped IPv6 alike). */
export interface AddressBlocks {
  /** The first configured range holding the address; undefined when none does. */
  match(address: string): Cidr | undefined;
}

export function newAddressBlocks(cidrs: readonly Cidr[]): AddressBlocks {
  // One list per range, so that a refusal can name the range that matched.
  const lists = cidrs.map((cidr) => {
    const list = new BlockList();
    list.addSubnet(cidr.address, cidr.prefix, cidr.family);
    return { cidr, list };
  });
  return {
    match(address) {
      const family = isIPv6(address) ? 'ipv6' : 'ipv4';
      return lists.find(({ list }) => list.check(address, family))?.cidr;
    },
  };
}
