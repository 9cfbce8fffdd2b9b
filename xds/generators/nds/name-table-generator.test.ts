import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { expectGolden } from '../../../testing/golden.js';
import { loadEnvoyProtos, NAME_TABLE_TYPE } from '../../envoy/index.js';
import { buildPushContext } from '../../model/index.js';
import { generateRequest } from '../../testing/generate-request.js';
import type { ConfigKey } from '../../push/push-request.js';
import { loadCase } from '../testing/test-cases.js';
import { newNameTableGenerator } from './name-table-generator.js';

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
  ] as Array<[string, ConfigKey[], boolean]>)('%s: pushed: %s', (_case, configsUpdated, pushed) => {
    const result = generator.generate(proxy, push, generateRequest({ names: [], full: true, configsUpdated }));
    expect(result !== undefined).toBe(pushed);
  });
});
