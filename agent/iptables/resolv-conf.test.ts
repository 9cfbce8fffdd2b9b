import { describe, expect, test } from '@jest/globals';
import { parseResolvConf } from './resolv-conf.js';

describe('parseResolvConf', () => {
  test('takes the nameserver lines, IPv4 and IPv6, and skips comments and the rest', () => {
    const text = [
      '# generated',
      'search default.svc.cluster.local svc.cluster.local',
      'nameserver 10.96.0.10',
      '  nameserver   fd00::a  # cluster DNS',
      ';nameserver 10.0.0.1',
      'nameserver not-an-address',
      'options ndots:5',
      'nameserver 127.0.0.53',
    ].join('\n');
    expect(parseResolvConf(text)).toEqual(['10.96.0.10', 'fd00::a', '127.0.0.53']);
  });
});
