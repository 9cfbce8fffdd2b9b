import { describe, test, expect } from '@jest/globals';
import { isCidr, isIpAddress, isIpOrCidr } from './ip-address.js';

describe('IP addresses and CIDR ranges', () => {
  test.each([
    ['10.0.0.1', true, false],
    ['::1', true, false],
    ['2001:db8::1', true, false],
    ['10.0.0.0/8', false, true],
    ['10.0.0.0/0', false, true],
    ['10.0.0.0/32', false, true],
    ['2001:db8::/128', false, true],
    ['10.0.0.0/33', false, false],
    ['2001:db8::/129', false, false],
    ['10.0.0.0/08', false, false],
    ['10.0.0.0/', false, false],
    ['10.0.0/8', false, false],
    ['1.2.3', false, false],
    ['10.0.0.256', false, false],
    ['fe80::1%eth0', false, false],
    ['abc', false, false],
    ['10.0.0.0/8/8', false, false],
  ])('%p: address %p, cidr %p', (value, address, cidr) => {
    expect(isIpAddress(value)).toBe(address);
    expect(isCidr(value)).toBe(cidr);
    expect(isIpOrCidr(value)).toBe(address || cidr);
  });
});
