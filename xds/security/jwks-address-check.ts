import { BlockList, isIP } from 'node:net';
import type { Cidr } from '../../runtime/index.js';
import { MeshError } from '../../runtime/index.js';
import { newAddressBlocks } from './address-blocks.js';

export class JwksFetchError extends MeshError<'jwks-fetch-failed'> {
  /** What the log says besides the message (a refused address and the range that refused it). */
  readonly fields: Readonly<Record<string, string>>;

  constructor(message: string, options?: { cause?: unknown; fields?: Readonly<Record<string, string>> }) {
    super('jwks-fetch-failed', message, options);
    this.fields = options?.fields ?? {};
  }
}

/** Which addresses a JWKS fetch may reach: asked before any socket and again on the addresses dialled. */
export interface JwksAddressCheck {
  /** Why `uri` may not be fetched from these addresses (all of them, any may be dialled); undefined when it may. */
  refusal(uri: string, addresses: readonly string[]): JwksFetchError | undefined;
}

function forbiddenAddresses(): BlockList {
  const list = new BlockList();
  list.addSubnet('169.254.0.0', 16, 'ipv4');
  list.addSubnet('fe80::', 10, 'ipv6');
  list.addAddress('fd00:ec2::254', 'ipv6');
  list.addAddress('100.100.100.200', 'ipv4');
  return list;
}

/** Link-local and cloud-metadata addresses always, and the ranges of BLOCKED_CIDRS_IN_JWKS_URIS. */
export function newJwksAddressCheck(blockedCidrs: readonly Cidr[]): JwksAddressCheck {
  const forbidden = forbiddenAddresses();
  const blocked = newAddressBlocks(blockedCidrs);
  return {
    refusal(uri, addresses) {
      for (const address of addresses) {
        if (forbidden.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4'))
          return new JwksFetchError(`"${uri}": ${address} is a link-local or metadata address`);
      }
      for (const address of addresses) {
        const cidr = blocked.match(address);
        if (cidr)
          return new JwksFetchError(`"${uri}": ${address} is in ${cidr.text} of BLOCKED_CIDRS_IN_JWKS_URIS`, {
            fields: { uri, address, cidr: cidr.text },
          });
      }
      return undefined;
    },
  };
}
