import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { expectGolden } from '../../../testing/golden.js';
import { jsonToStruct, loadEnvoyProtos, NAME_TABLE_TYPE } from '../../envoy/index.js';
import { parseProxy } from '../../proxy.js';
import { autoAllocatedAddresses, buildPushContext } from '../../model/index.js';
import { generateRequest } from '../../testing/generate-request.js';
import type { ConfigKey } from '../../push/push-request.js';
import { loadCase } from '../testing/test-cases.js';
import { buildNameTable, newNameTableGenerator } from './name-table-generator.js';

const TESTDATA = fileURLToPath(new URL('./testdata/', import.meta.url));

describe('the NDS name table', () => {
  const { model, proxy } = loadCase(TESTDATA, 'name-table.in.yaml');
  const push = buildPushContext(model);
  const generator = newNameTableGenerator();

  test('matches its golden file, and encodes as the NameTable message', () => {
    const result = generator.generate(proxy, push, generateRequest({ names: [], full: true, configsUpdated: [] }));
    const named = result?.resources[0];
    const table = typeof named?.resource === 'function' ? named.resource() : named?.resource;
    expectGolden(TESTDATA, 'name-table', table);
    const protos = loadEnvoyProtos();
    const encoded = protos.encodeAny(NAME_TABLE_TYPE, table as object);
    expect(protos.decodeAny(encoded)).toEqual(table);
  });

  test('a proxy that captures DNS and asked for allocation also gets addresses for entries without any', () => {
    const asking = parseProxy({
      id: proxy.nodeId,
      metadata: jsonToStruct({ NAMESPACE: 'bar', INSTANCE_IPS: '10.0.1.1', DNS_CAPTURE: 'true', DNS_AUTO_ALLOCATE: 'true' }),
    });
    const table = buildNameTable(asking, push);
    // search.example.com (DNS, no addresses) gets one; the wildcard and NONE entries never do.
    expect(table.get('search.example.com')).toEqual({ ips: [autoAllocatedAddresses(push).get('search.example.com')?.ipv4], registry: 'External' });
    expect(table.get('search.example.com')?.ips[0]).toMatch(/^240\.240\.\d+\.\d+$/);
    expect(table.get('corp.example.com')).toBeUndefined();
    expect(table.get('*.wild.example.com')?.ips).toEqual(['192.0.2.40']);
    // Without DNS capture the allocation is not used.
    const notCapturing = parseProxy({ id: proxy.nodeId, metadata: jsonToStruct({ NAMESPACE: 'bar', DNS_AUTO_ALLOCATE: 'true' }) });
    expect(buildNameTable(notCapturing, push).get('search.example.com')).toBeUndefined();
  });

  test.each([
    ['only policies changed', [{ kind: 'AuthorizationPolicy', namespace: 'foo', name: 'deny' }], false],
    [
      'a VirtualService and a DestinationRule changed',
      [
        { kind: 'VirtualService', namespace: 'foo', name: 'vs' },
        { kind: 'DestinationRule', namespace: 'foo', name: 'dr' },
      ],
      false,
    ],
    ['a ServiceEntry changed', [{ kind: 'ServiceEntry', namespace: 'ext', name: 'payments-eu' }], true],
    [
      'a Service changed with a policy',
      [
        { kind: 'Service', namespace: 'foo', name: 'db' },
        { kind: 'PeerAuthentication', namespace: 'foo', name: 'pa' },
      ],
      true,
    ],
    ['anything (no config named)', [], true],
  ] as Array<[string, ConfigKey[], boolean]>)('%s', (_case, configsUpdated, pushed) => {
    const result = generator.generate(proxy, push, generateRequest({ names: [], full: true, configsUpdated }));
    expect(result !== undefined).toBe(pushed);
  });
});
