import { isIPv4, isIPv6 } from 'node:net';
import type { Service } from '../../controllers/index.js';
import type { Proxy } from '../proxy.js';
import type { PushContext } from './push-context.js';

/** An address pair from the reserved ranges: 240.240.0.0/16 (class E) and 2001:2::/48 (benchmarking). */
export interface AllocatedAddresses {
  readonly ipv4: string;
  readonly ipv6: string;
}

const PRIME = 65_011;
const MAX_ADDRESSES = 256 * 254;
const UINT32 = 2 ** 32;

// Keyed by the immutable push context: every generator of one push reads the same allocation.
const byPush = new WeakMap<PushContext, ReadonlyMap<string, AllocatedAddresses>>();

/**
 * The addresses the reference allocates to ServiceEntry hosts that have none (not a wildcard,
 * resolution not NONE), so that a proxy resolving them through its DNS proxy can tell TCP
 * services on one port apart: a slot per host by the FNV-1a hash of `<namespace>/<host>`, double
 * hashing on a collision, then the slots numbered in order, skipping `.0`. Deterministic: every
 * daemon allocates the same, nothing is stored.
 */
export function autoAllocatedAddresses(push: PushContext): ReadonlyMap<string, AllocatedAddresses> {
  let allocated = byPush.get(push);
  if (!allocated) {
    const eligible = push.services.filter(
      (service) =>
        service.entry &&
        service.clusterIp === undefined &&
        service.entry.addresses.length === 0 &&
        !service.hostname.startsWith('*') &&
        service.entry.resolution !== 'NONE',
    );
    byPush.set(push, (allocated = allocateAddresses(eligible)));
  }
  return allocated;
}

/**
 * Whether a proxy uses allocated addresses: it captures DNS (`DNS_CAPTURE`) and asked for them
 * (`DNS_AUTO_ALLOCATE`, from `MESH_META_DNS_AUTO_ALLOCATE`), as the reference's proxies do.
 */
export function usesAutoAllocation(proxy: Proxy): boolean {
  return proxy.metadata.raw['DNS_CAPTURE'] === 'true' && proxy.metadata.raw['DNS_AUTO_ALLOCATE'] === 'true';
}

/** What a proxy's share of allocated addresses depends on: '' when it uses none, else its address families. */
export function autoAllocationKey(proxy: Proxy): string {
  if (!usesAutoAllocation(proxy)) return '';
  const families = [
    proxy.ipAddresses.length === 0 || proxy.ipAddresses.some((address) => isIPv4(address)) ? 'v4' : '',
    proxy.ipAddresses.some((address) => isIPv6(address)) ? 'v6' : '',
  ];
  return `alloc:${families.join('')}`;
}

/** The allocated addresses of a service for a proxy, in the proxy's address families; none when it has an address or the proxy does not use them. */
export function allocatedAddressesFor(push: PushContext, proxy: Proxy, service: Service): string[] {
  if (!usesAutoAllocation(proxy) || !service.entry || service.clusterIp !== undefined) return [];
  const pair = autoAllocatedAddresses(push).get(service.hostname);
  if (!pair) return [];
  const v6 = proxy.ipAddresses.some((address) => isIPv6(address));
  const v4 = proxy.ipAddresses.length === 0 || proxy.ipAddresses.some((address) => isIPv4(address));
  return [...(v4 ? [pair.ipv4] : []), ...(v6 ? [pair.ipv6] : [])];
}

/** The allocation of these hosts, in this order (the first of two that want one slot keeps it), by hostname. */
export function allocateAddresses(hosts: readonly { readonly namespace: string; readonly hostname: string }[]): Map<string, AllocatedAddresses> {
  const slots: ({ readonly hostname: string } | undefined)[] = new Array<{ readonly hostname: string } | undefined>(MAX_ADDRESSES);
  let placed = 0;
  for (const service of hosts) {
    if (placed >= MAX_ADDRESSES) break;
    const hash = fnv1a32(`${service.namespace}/${service.hostname}`);
    let slot = hash % MAX_ADDRESSES;
    if (slots[slot] !== undefined) {
      const step = PRIME - (hash % PRIME);
      for (let i = 1; slots[slot] !== undefined; i++) slot = ((hash + i * step) % UINT32) % (MAX_ADDRESSES - 1);
    }
    slots[slot] = service;
    placed++;
  }
  const allocated = new Map<string, AllocatedAddresses>();
  let counter = 0;
  for (const service of slots) {
    counter++;
    if (service === undefined) continue;
    if (counter % 255 === 0) counter++;
    const third = Math.floor(counter / 255);
    const fourth = counter % 255;
    allocated.set(service.hostname, {
      ipv4: `240.240.${third}.${fourth}`,
      ipv6: third === 0 ? `2001:2::f0f0:${fourth.toString(16)}` : `2001:2::f0f0:${third.toString(16)}${fourth.toString(16)}`,
    });
  }
  return allocated;
}

/** FNV-1a, 32 bits, over the UTF-8 bytes. */
function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}
