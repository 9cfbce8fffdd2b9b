import { describe, expect, test } from '@jest/globals';
import { compileForwardedFor, type ForwardedForConfig } from './forwarded-for.js';

const INTERNAL_10 = { internal_address_config: { cidr_ranges: [{ address_prefix: '10.0.0.0', prefix_len: 8 }] } };

describe("the connection manager's forwarding headers, as Envoy's", () => {
  test.each<[string, ForwardedForConfig, Record<string, string>, string, { set: Record<string, string>; remove: string[] }]>([
    ['not the remote address, no XFF: external, nothing added', {}, { 'x-envoy-retry-on': '5xx' }, '10.0.0.1', { set: {}, remove: ['x-envoy-retry-on'] }],
    [
      'not the remote address, one internal XFF entry: internal',
      INTERNAL_10,
      { 'x-forwarded-for': '10.1.2.3' },
      '192.0.2.1',
      { set: { 'x-envoy-internal': 'true' }, remove: [] },
    ],
    [
      'remote address, internal peer: appended, internal, trusted headers kept',
      { use_remote_address: true, ...INTERNAL_10 },
      { 'x-envoy-retry-on': '5xx' },
      '10.0.0.7',
      { set: { 'x-forwarded-for': '10.0.0.7', 'x-envoy-internal': 'true' }, remove: [] },
    ],
    [
      'remote address, no internal ranges: edge, external address, edge headers dropped',
      { use_remote_address: { value: true } },
      { 'x-envoy-decorator-operation': 'x', 'x-envoy-internal': 'true' },
      '10.0.0.7',
      { set: { 'x-forwarded-for': '10.0.0.7', 'x-envoy-external-address': '10.0.0.7' }, remove: ['x-envoy-internal', 'x-envoy-decorator-operation'] },
    ],
    [
      'remote address with an earlier XFF: never internal, appended',
      { use_remote_address: true, ...INTERNAL_10 },
      { 'x-forwarded-for': '10.9.9.9' },
      '10.0.0.7',
      { set: { 'x-forwarded-for': '10.9.9.9,10.0.0.7', 'x-envoy-external-address': '10.0.0.7' }, remove: [] },
    ],
    [
      'one trusted hop: the client is the last XFF entry before the append',
      { use_remote_address: true, xff_num_trusted_hops: 1 },
      { 'x-forwarded-for': '198.51.100.4,203.0.113.9' },
      '10.0.0.7',
      { set: { 'x-forwarded-for': '198.51.100.4,203.0.113.9,10.0.0.7', 'x-envoy-external-address': '203.0.113.9' }, remove: [] },
    ],
    [
      'a loopback peer: this proxy appends its own address',
      { use_remote_address: true },
      {},
      '127.0.0.1',
      { set: { 'x-forwarded-for': '10.0.0.5', 'x-envoy-external-address': '127.0.0.1' }, remove: [] },
    ],
  ])('%s', (_, config, headers, remoteAddress, expected) => {
    expect(compileForwardedFor(config)({ headers, remoteAddress, localAddress: '10.0.0.5' })).toEqual(expected);
  });
});
