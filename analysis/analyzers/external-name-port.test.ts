import { describe, expect, test } from '@jest/globals';
import { analyze, type PortSpec } from '../testing/fixtures.js';
import { portNameAnalyzer } from './workload-analyzers.js';

const externalName = (ports: readonly PortSpec[], type = 'ExternalName'): object => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'db', namespace: 'foo' },
  spec: { type, ...(type === 'ExternalName' ? { externalName: 'db.example.com' } : {}), ports },
});
const INVALID =
  'Warning [MSH0150] (Service db.foo) Port name for ExternalName service is invalid. Proxy may prevent tcp named ports and unmatched traffic for ports serving TCP protocol from being forwarded correctly';

describe('service.PortNameAnalyzer: ExternalName Services (MSH0150)', () => {
  test.each([
    ['a name without protocol', { name: 'db', port: 5432 }],
    ['the name tcp', { name: 'tcp', port: 5432 }],
  ])('%s is MSH0150, not MSH0118', (_case, port) => {
    expect(analyze(portNameAnalyzer, [externalName([port])])).toEqual([INVALID]);
  });

  test('names with a protocol, tcp-<suffix> included, or an appProtocol stay quiet', () => {
    expect(
      analyze(portNameAnalyzer, [
        externalName([
          { name: 'tcp-db', port: 5432 },
          { name: 'https', port: 443 },
          { name: 'db', port: 5433, appProtocol: 'tcp' },
        ]),
      ]),
    ).toEqual([]);
  });

  test('the name tcp on another Service type is fine', () => {
    expect(analyze(portNameAnalyzer, [externalName([{ name: 'tcp', port: 5432 }], 'ClusterIP')])).toEqual([]);
  });
});
