import { describe, expect, test } from '@jest/globals';
import type { Analyzer } from './analyzer.js';
import { buildSnapshot } from './build-snapshot.js';
import { formatMessage } from './messages.js';
import { ANALYZE_SUPPRESS_ANNOTATION } from '../names/index.js';
import { runAnalyzers } from './run-analyzers.js';

const virtualService = (name: string, annotations?: Record<string, string>): object => ({
  apiVersion: 'networking.mesh.io/v1alpha3',
  kind: 'VirtualService',
  metadata: { name, namespace: 'default', ...(annotations ? { annotations } : {}) },
  spec: { hosts: ['reviews'], http: [{ route: [{ destination: { host: 'reviews' } }] }] },
});

const everyVirtualService: Analyzer = {
  name: 'test.EveryVirtualService',
  description: 'reports every VirtualService',
  inputs: ['VirtualService'],
  analyze(context) {
    for (const resource of context.read('VirtualService'))
      context.report('ReferencedResourceNotFound', resource, `Referenced host not found: "${resource.name}"`);
  },
};

describe('runAnalyzers', () => {
  test('a message names the resource and the file and line it came from, in the reference log format', () => {
    const snapshot = buildSnapshot({ objects: [{ object: virtualService('reviews'), source: { file: 'deploy/x.yaml', line: 12 } }] });
    const result = runAnalyzers(snapshot, [everyVirtualService]);
    expect(result.messages.map(formatMessage)).toEqual([
      'Error [MSH0101] (VirtualService reviews.default deploy/x.yaml:12) Referenced host not found: "reviews"',
    ]);
    expect(result.messages[0]?.resource).toEqual({ kind: 'VirtualService', name: 'reviews', namespace: 'default' });
    expect(result.executed).toEqual(['test.EveryVirtualService']);
  });

  test('an analyzer reading an input it did not declare fails as an internal error naming it, and the others still run', () => {
    const sneaky: Analyzer = {
      name: 'test.Sneaky',
      description: 'reads pods undeclared',
      inputs: ['VirtualService'],
      analyze: (context) => void context.read('Pod'),
    };
    const snapshot = buildSnapshot({ objects: [{ object: virtualService('reviews') }], complete: ['Pod'] });
    const lines = runAnalyzers(snapshot, [sneaky, everyVirtualService]).messages.map(formatMessage);
    expect(lines).toContain('Error [MSH0001] (Cluster) analyzer test.Sneaky failed: analyzer test.Sneaky read input Pod that it did not declare');
    expect(lines.some((line) => line.startsWith('Error [MSH0101]'))).toBe(true);
  });

  test('an analyzer whose input the snapshot does not hold is skipped, not told that none exist', () => {
    const pods: Analyzer = {
      name: 'test.Pods',
      description: 'needs pods',
      inputs: ['Pod'],
      analyze: (context) => context.report('PodMissingProxy', undefined, 'ran'),
    };
    const result = runAnalyzers(buildSnapshot({ objects: [{ object: virtualService('reviews') }] }), [pods]);
    expect(result).toEqual({ messages: [], executed: [], skipped: ['test.Pods'] });
    expect(runAnalyzers(buildSnapshot({ objects: [], complete: ['Pod'] }), [pods]).executed).toEqual(['test.Pods']);
  });

  test.each([
    ['MSH0101', 0],
    ['MSH0102, MSH0101', 0],
    ['*', 0],
    ['MSH0102', 1],
  ])('the suppress annotation %s leaves %i messages', (value, count) => {
    const snapshot = buildSnapshot({ objects: [{ object: virtualService('reviews', { [ANALYZE_SUPPRESS_ANNOTATION]: value }) }] });
    expect(runAnalyzers(snapshot, [everyVirtualService]).messages).toHaveLength(count);
  });
});

describe('buildSnapshot', () => {
  test('an invalid mesh object is typed and marked, one without a typed shape kept raw only; a later copy replaces an earlier one', () => {
    const invalid = { ...virtualService('bad'), spec: { hosts: [], tcp: [{ route: [{ destination: { host: 'reviews' } }] }], typo: true } };
    const untypable = { ...virtualService('untypable'), spec: { hosts: 'reviews' } };
    const snapshot = buildSnapshot({
      objects: [{ object: invalid }, { object: untypable }, { object: virtualService('good') }, { object: virtualService('good') }],
    });
    expect(snapshot.inputs.VirtualService.map((r) => [r.name, r.invalid])).toEqual([
      ['bad', { omitted: ['spec.typo'] }],
      ['good', undefined],
    ]);
    expect(snapshot.inputs.VirtualService[0]?.object.spec).toEqual({ hosts: [], tcp: [{ route: [{ destination: { host: 'reviews' } }] }] });
    expect(snapshot.inputs.MeshObject.map((r) => r.name)).toEqual(['bad', 'untypable', 'good']);
    expect(snapshot.available.has('VirtualService')).toBe(true);
    expect(snapshot.available.has('Pod')).toBe(false);
  });

  test('a semantically invalid object is typed as it is, with nothing omitted', () => {
    const invalid = { ...virtualService('bad'), spec: { hosts: [] } };
    expect(buildSnapshot({ objects: [{ object: invalid }] }).inputs.VirtualService).toEqual([
      { kind: 'VirtualService', name: 'bad', namespace: 'default', object: invalid, invalid: { omitted: [] } },
    ]);
  });

  test('Secrets keep their key names and type but never their key material', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: 'cred', namespace: 'mesh-system' },
      data: { 'tls.key': 'c2VjcmV0', 'tls.crt': 'Y2VydA==' },
    };
    const [stored] = buildSnapshot({ objects: [{ object: secret }] }).inputs.Secret;
    expect(stored?.object).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: secret.metadata,
      data: { 'tls.key': '', 'tls.crt': '' },
    });
  });
});
