import { beforeAll, describe, expect, test } from '@jest/globals';
import { loadEnvoyProtos, type EnvoyProtos } from './envoy-protos.js';
import { withPartKey } from './encoded-parts.js';
import { ROUTE_TYPE } from './type-urls.js';

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

const host = (name: string, domains: string[]): Record<string, unknown> => ({
  name,
  domains,
  routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: `outbound|80||${name}`, timeout: { seconds: 0 } } }],
  include_request_attempt_count: true,
});

/** What protobufjs gives for the whole message: the bytes the shared encoding must equal. */
function plainEncoding(message: object): Uint8Array {
  const type = protos.lookupType('envoy.config.route.v3.RouteConfiguration');
  return type.encode(type.fromObject(message)).finish();
}

describe('route configurations with shared virtual hosts', () => {
  test('are encoded byte for byte as the whole message, the fields after virtual_hosts included', () => {
    const message = {
      name: '80',
      virtual_hosts: [host('a.foo.svc.cluster.local:80', ['a.foo.svc.cluster.local', 'a.foo']), host('b.bar.svc.cluster.local:80', ['b.bar'])],
      internal_only_headers: ['x-internal'],
      request_headers_to_add: [{ header: { key: 'x-a', value: '1' } }],
      validate_clusters: { value: false },
      ignore_port_in_host_matching: true,
    };
    expect(Buffer.from(protos.encodeAny(ROUTE_TYPE, message).value)).toEqual(Buffer.from(plainEncoding(message)));
    expect(protos.decodeAny(protos.encodeAny(ROUTE_TYPE, message))).toMatchObject({
      name: '80',
      virtual_hosts: [{ domains: ['a.foo.svc.cluster.local', 'a.foo'] }, { domains: ['b.bar'] }],
    });
  });

  test('without a name, or without virtual hosts, as the whole message', () => {
    for (const message of [
      { virtual_hosts: [host('a:80', ['a'])] },
      { name: 'empty', virtual_hosts: [], validate_clusters: { value: false } },
      { name: 'none' },
    ]) {
      expect(Buffer.from(protos.encodeAny(ROUTE_TYPE, message).value)).toEqual(Buffer.from(plainEncoding(message)));
    }
  });

  test('a virtual host object is encoded once: the configurations that share it share its bytes', () => {
    // The encodings the caller keeps, and the shared host's key in them.
    const parts = new Map<string, Uint8Array>();
    const shared = withPartKey(host('c.baz.svc.cluster.local:80', ['c.baz.svc.cluster.local']), 'c.baz:80');
    const first = protos.decodeAny(protos.encodeAny(ROUTE_TYPE, { name: '80', virtual_hosts: [host('own:80', ['own']), shared] }, parts));
    // Generators never change an object they handed out; this shows the bytes come from the first encoding.
    shared['domains'] = ['changed'];
    const second = protos.decodeAny(protos.encodeAny(ROUTE_TYPE, { name: '80', virtual_hosts: [shared] }, parts));
    expect(first['virtual_hosts']).toMatchObject([{ domains: ['own'] }, { domains: ['c.baz.svc.cluster.local'] }]);
    expect(second['virtual_hosts']).toMatchObject([{ domains: ['c.baz.svc.cluster.local'] }]);
    // A new object with those domains is encoded as it is.
    expect(protos.decodeAny(protos.encodeAny(ROUTE_TYPE, { name: '80', virtual_hosts: [{ ...shared }] }, parts))['virtual_hosts']).toMatchObject([
      { domains: ['changed'] },
    ]);
  });

  test('an invalid virtual host is refused as before, naming the field, and is not kept', () => {
    const bad = { ...host('d:80', ['d']), retry_policy: { num_retries: 'three' } };
    const encode = (): unknown => protos.encodeAny(ROUTE_TYPE, { name: '80', virtual_hosts: [host('ok:80', ['ok']), bad] });
    expect(encode).toThrow(/^invalid envoy\.config\.route\.v3\.RouteConfiguration: .*virtual_hosts.*num_retries/);
    expect(encode).toThrow(/num_retries/);
    expect(() => protos.encodeAny(ROUTE_TYPE, { name: '80', virtual_hosts: [host('ok:80', ['ok']), 'not a host'] })).toThrow(
      /^invalid envoy\.config\.route\.v3\.RouteConfiguration/,
    );
  });
});
