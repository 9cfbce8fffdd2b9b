import { describe, expect, test } from '@jest/globals';
import { allocateAddresses } from './auto-allocation.js';

// The reference's own expectations for its hash-based allocation (FNV-1a of `<namespace>/<host>`,
// double hashing), so that a proxy sees the same address whichever implementation answers.
const hosts = (...names: string[]) => names.map((name) => ({ namespace: name.split('/')[0] ?? '', hostname: name.split('/')[1] ?? '' }));
const v4 = (allocated: ReturnType<typeof allocateAddresses>) => Object.fromEntries([...allocated].map(([host, pair]) => [host, pair.ipv4]));

describe('automatically allocated addresses', () => {
  test('one host: both families, from the reserved ranges', () => {
    expect(allocateAddresses(hosts('/foo.com')).get('foo.com')).toEqual({ ipv4: '240.240.227.81', ipv6: '2001:2::f0f0:e351' });
    expect(allocateAddresses(hosts('a/a.example.com')).get('a.example.com')).toEqual({ ipv4: '240.240.134.206', ipv6: '2001:2::f0f0:86ce' });
  });

  test('two hosts of one hash: the first keeps the slot, the second takes the next by double hashing', () => {
    const allocated = allocateAddresses(hosts('/a17061.example.com', '/a44155.example.com'));
    expect(allocated.get('a17061.example.com')).toEqual({ ipv4: '240.240.25.11', ipv6: '2001:2::f0f0:19b' });
    expect(allocated.get('a44155.example.com')).toEqual({ ipv4: '240.240.31.17', ipv6: '2001:2::f0f0:1f11' });
  });

  test('addresses stay when hosts come and go around them', () => {
    const original = { 'a.com': '240.240.109.8', 'c.com': '240.240.234.51', 'e.com': '240.240.85.60', 'i.com': '240.240.15.2', 'o.com': '240.240.122.71' };
    const names = Object.keys(original).map((name) => `/${name}`);
    expect(v4(allocateAddresses(hosts(...names)))).toEqual(original);
    const more = v4(allocateAddresses(hosts(...names, '/b.com', '/d.com', '/f.com', '/m.com')));
    expect(Object.fromEntries(Object.keys(original).map((name) => [name, more[name]]))).toEqual(original);
  });

  test('never a .0 or .255, and every host its own address', () => {
    const many = allocateAddresses(Array.from({ length: 5000 }, (_, i) => ({ namespace: '', hostname: `foo${i}.com` })));
    const addresses = [...many.values()].map((pair) => pair.ipv4);
    expect(new Set(addresses).size).toBe(5000);
    expect(addresses.filter((address) => /\.(0|255)$/.test(address))).toEqual([]);
  });
});
