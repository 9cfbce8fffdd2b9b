import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { DEFAULT_MESH_CONFIG } from '../../crds/index.js';
import { fuzzParameters } from '../../testing/fuzz.js';
import { BUILTIN_INJECTOR_CONFIG } from './builtin-injector-config.js';
import { parseInjectorConfig } from './injector-config.js';
import { compileInjector } from './injector.js';
import { newTemplateCompiler } from './template-compiler.js';
import type { Pod } from './pod.js';
import { newRenderMemo } from './render-memo.js';
import { errorMessage } from '../../runtime/index.js';

const templates = newTemplateCompiler();

describe('newRenderMemo', () => {
  const counting = <D extends object, R>(render: (data: D) => R): { memo: ReturnType<typeof newRenderMemo<D, R>>; renders: () => number } => {
    let count = 0;
    const memo = newRenderMemo((data: D) => {
      count++;
      return render(data);
    });
    return { memo, renders: () => count };
  };

  test('reuses a result while everything the render read is the same, whatever else differs', () => {
    const { memo, renders } = counting((data: { labels: Record<string, string>; name: string }) => `${data.labels['app'] ?? 'none'}`);
    expect(memo.get({ labels: { app: 'a', id: '1' }, name: 'x' })).toBe('a');
    expect(memo.get({ labels: { app: 'a', id: '2' }, name: 'y' })).toBe('a');
    expect(renders()).toBe(1);
    expect(memo.get({ labels: { app: 'b', id: '1' }, name: 'x' })).toBe('b');
    expect(memo.get({ labels: { id: '1' }, name: 'x' })).toBe('none');
    expect(renders()).toBe(3);
  });

  test('enumerating keys, testing presence and reading a type all count as reads', () => {
    const keys = counting((data: { labels: Record<string, string> }) => Object.keys(data.labels).join(','));
    keys.memo.get({ labels: { a: '1' } });
    expect(keys.memo.get({ labels: { a: '2' } })).toBe('a');
    expect(keys.memo.get({ labels: { a: '1', b: '2' } })).toBe('a,b');
    expect(keys.renders()).toBe(2);
    const presence = counting((data: { labels: Record<string, string> }) => ('app' in data.labels ? 'yes' : 'no'));
    presence.memo.get({ labels: { app: '' } });
    expect(presence.memo.get({ labels: {} })).toBe('no');
    const own = counting((data: { labels: Record<string, string> }) => (Object.prototype.hasOwnProperty.call(data.labels, 'app') ? 'own' : 'not'));
    own.memo.get({ labels: { app: 'x' } });
    expect(own.memo.get({ labels: {} })).toBe('not');
    const shape = counting((data: { value: unknown }) => (Array.isArray(data.value) ? 'array' : typeof data.value));
    shape.memo.get({ value: [] });
    expect(shape.memo.get({ value: {} })).toBe('object');
    expect(shape.memo.get({ value: 'text' })).toBe('string');
    const json = counting((data: { spec: object }) => JSON.stringify(data.spec));
    json.memo.get({ spec: { a: [1, { b: 2 }] } });
    expect(json.memo.get({ spec: { a: [1, { b: 3 }] } })).toBe('{"a":[1,{"b":3}]}');
  });

  test('a stream of misses renders mostly untracked, yet inputs that come back are found again', () => {
    const { memo, renders } = counting((data: { app: string }) => data.app.toUpperCase());
    for (let i = 0; i < 100; i++) expect(memo.get({ app: `app-${i}` })).toBe(`APP-${i}`);
    expect(renders()).toBe(100);
    // One workload again and again: within a few tracked renders it is remembered, and the hit rate recovers.
    for (let i = 0; i < 60; i++) expect(memo.get({ app: 'same' })).toBe('SAME');
    expect(renders()).toBeLessThanOrEqual(100 + 17);
    const before = renders();
    for (let i = 0; i < 20; i++) memo.get({ app: 'same' });
    expect(renders()).toBe(before);
  });

  test('a frozen value is compared whole; a render may not write its data; the least recently used result goes first', () => {
    const frozen = counting((data: { config: { mode: string } }) => data.config.mode);
    frozen.memo.get({ config: Object.freeze({ mode: 'a' }) } as never);
    expect(frozen.memo.get(Object.freeze({ config: Object.freeze({ mode: 'b' }) }))).toBe('b');
    const writer = newRenderMemo((data: { x: number }) => ((data as { x: number }).x = 2));
    expect(() => writer.get({ x: 1 })).toThrow('a template may not change its data');
    const small = newRenderMemo((data: { n: number }) => ({ n: data.n }), 2);
    const first = small.get({ n: 1 });
    small.get({ n: 2 });
    small.get({ n: 3 });
    expect(small.get({ n: 1 })).not.toBe(first);
  });
});

// The memo is only sound if templates are pure functions of what they read. One injector (its memo
// warm across pods) must give exactly what a fresh injector gives for each pod.
const config = parseInjectorConfig(BUILTIN_INJECTOR_CONFIG);
const annotationValues: Record<string, readonly string[]> = {
  'sidecar.mesh.io/interceptionMode': ['REDIRECT', 'TPROXY', 'NONE'],
  'traffic.sidecar.mesh.io/includeOutboundIPRanges': ['*', '10.0.0.0/8', '10.0.0.0/8,192.168.0.0/16'],
  'traffic.sidecar.mesh.io/excludeInboundPorts': ['15020', '8080,9090'],
  'sidecar.mesh.io/proxyCPU': ['100m', '2'],
  'sidecar.mesh.io/proxyMemory': ['128Mi'],
  'proxy.mesh.io/config': ['concurrency: 4', 'holdApplicationUntilProxyStarts: true', 'proxyMetadata: { A: b }'],
  'status.sidecar.mesh.io/port': ['15021', '15030'],
  'sidecar.mesh.io/rewriteAppHTTPProbers': ['true', 'false'],
  'inject.mesh.io/templates': ['sidecar', 'grpc-agent'],
  'prometheus.io/scrape': ['true', 'false'],
};
const labelValues: Record<string, readonly string[]> = {
  app: ['reviews', 'ratings'],
  version: ['v1', 'v2'],
  'service.mesh.io/canonical-name': ['canon'],
  'app.kubernetes.io/name': ['named'],
  'security.mesh.io/tlsMode': ['disabled'],
  'topology.mesh.io/network': ['net-a'],
  'pod-template-hash': ['abc', 'def'],
};
const pick = (table: Record<string, readonly string[]>): fc.Arbitrary<Record<string, string>> =>
  fc
    .subarray(Object.keys(table))
    .chain((keys) =>
      fc
        .tuple(...keys.map((key) => fc.constantFrom(...(table[key] as string[]))))
        .map((values) => Object.fromEntries(keys.map((key, i) => [key, values[i] as string]))),
    );
const containerArb = fc.record(
  {
    name: fc.constantFrom('app', 'cache', 'mesh-proxy'),
    image: fc.constantFrom('x/app:1', 'auto'),
    ports: fc.array(fc.record({ containerPort: fc.constantFrom(80, 8080, 9090), name: fc.constantFrom('http', 'grpc') }), { maxLength: 2 }),
    readinessProbe: fc.option(fc.record({ httpGet: fc.record({ path: fc.constantFrom('/ready', '/'), port: fc.constantFrom(80, 8080) }) }), { nil: undefined }),
    securityContext: fc.option(fc.record({ runAsUser: fc.constantFrom(1000, 1337) }), { nil: undefined }),
  },
  { requiredKeys: ['name', 'image'] },
);
const podArb: fc.Arbitrary<Pod> = fc
  .record({
    labels: pick(labelValues),
    annotations: pick(annotationValues),
    name: fc.constantFrom('', 'pod-a', 'pod-b'),
    serviceAccountName: fc.constantFrom('default', 'reviews'),
    containers: fc.uniqueArray(containerArb, { minLength: 1, maxLength: 3, selector: (c) => c.name }),
  })
  .map(({ labels, annotations, name, serviceAccountName, containers }) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...(name === '' ? { generateName: 'reviews-v1-abc-' } : { name }), namespace: 'foo', labels, annotations },
    spec: { serviceAccountName, containers },
  }));

/** A pod and variants of it that each change one thing: most renders of a warm injector are then remembered ones. */
const variantsArb: fc.Arbitrary<Pod[]> = fc
  .tuple(
    podArb,
    fc.array(
      fc.oneof(
        fc.tuple(fc.constant('label' as const), fc.constantFrom(...Object.keys(labelValues)), fc.constantFrom('', 'other', 'v3')),
        fc.tuple(
          fc.constant('annotation' as const),
          fc.constantFrom(...Object.keys(annotationValues)),
          fc.constantFrom('', ...Object.values(annotationValues).flat()),
        ),
        fc.tuple(fc.constant('port' as const), fc.constantFrom('0', '1'), fc.constantFrom('80', '9080')),
      ),
      { minLength: 1, maxLength: 8 },
    ),
  )
  .map(([base, changes]) => [
    base,
    ...changes.map(([what, key, value]) => {
      const pod = structuredClone(base) as {
        metadata: { labels: Record<string, string>; annotations: Record<string, string> };
        spec: { containers: { ports?: { containerPort: number }[] }[] };
      };
      if (what === 'label') pod.metadata.labels[key] = value;
      else if (what === 'annotation') {
        if (value === '') delete pod.metadata.annotations[key];
        else pod.metadata.annotations[key] = value;
      } else {
        const container = pod.spec.containers[Number(key) % pod.spec.containers.length];
        if (container) container.ports = [{ containerPort: Number(value) }];
      }
      return pod as unknown as Pod;
    }),
  ]);

describe('the injector with its render memo', () => {
  test('gives for every pod exactly what an injector without remembered renders gives', () => {
    const outcome = (run: () => Pod): unknown => {
      try {
        return run();
      } catch (error) {
        return { error: errorMessage(error) };
      }
    };
    fc.assert(
      fc.property(variantsArb, (pods) => {
        const warm = compileInjector(config, { templates });
        for (const pod of pods) {
          const params = { pod, namespace: 'foo', meshConfig: DEFAULT_MESH_CONFIG };
          expect(outcome(() => warm.inject(params))).toEqual(outcome(() => compileInjector(config, { templates }).inject(params)));
        }
      }),
      { ...fuzzParameters(), numRuns: 30 },
    );
  });
});
