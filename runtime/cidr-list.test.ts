import { describe, expect, test } from '@jest/globals';
import { parseCidr, parseCidrList } from './cidr-list.js';

describe('CIDR lists', () => {
  test("entries are trimmed, empty ones skipped, host bits allowed (Go's net.ParseCIDR)", () => {
    expect(parseCidrList(' 10.0.0.1/8 ,, fd00::/8,')).toEqual({
      ok: true,
      cidrs: [
        { text: '10.0.0.1/8', address: '10.0.0.1', prefix: 8, family: 'ipv4' },
        { text: 'fd00::/8', address: 'fd00::', prefix: 8, family: 'ipv6' },
      ],
    });
    expect(parseCidrList('')).toEqual({ ok: true, cidrs: [] });
  });

  test('the first bad entry is named', () => {
    expect(parseCidrList('10.0.0.0/8, 192.168.0.0/16x ,nope')).toEqual({ ok: false, entry: '192.168.0.0/16x' });
  });

  test.each(['10.0.0.0', '10.0.0.0/', '10.0.0.0/08', '10.0.0.0/33', '::/129', 'example.com/8', '1.2.3/8', '10.0.0.0/8/8', 'fe80::%1/64'])(
    '%j is not a CIDR range',
    (text) => {
      expect(parseCidr(text)).toBeUndefined();
    },
  );
});
