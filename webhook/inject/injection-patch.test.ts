import { describe, expect, test } from '@jest/globals';
import fastJsonPatch from 'fast-json-patch';
import { goldenCases, readCaseInput } from '../../testing/golden.js';
import { injectionPatch } from './injection-patch.js';
import type { Pod } from './pod.js';
import { builtinInjector, meshConfigWith } from './testing/injector-fixture.js';

const FOLDER = 'webhook/inject/testdata/inject';

/** A typical pod, then `change` applied to a copy of it. */
function podWith(
  change: (pod: { metadata: Record<string, unknown>; spec: Record<string, unknown> & { containers: Record<string, unknown>[] } }) => void = () => undefined,
): Pod {
  const container = (name: string, port: number): Record<string, unknown> => ({
    name,
    image: `example/${name}:1`,
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 5 },
    livenessProbe: { httpGet: { path: '/healthz', port }, periodSeconds: 10 },
  });
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'reviews-v1-6b746f74dc-',
      namespace: 'foo',
      labels: { app: 'reviews', version: 'v1', 'pod-template-hash': '6b746f74dc' } as Record<string, unknown>,
    },
    spec: { serviceAccountName: 'reviews', containers: [container('reviews', 9080), container('cache', 6379)] } as Record<string, unknown> & {
      containers: Record<string, unknown>[];
    },
  };
  change(pod);
  return pod;
}

const ODD_PODS: readonly (readonly [string, Pod])[] = [
  ['typical', podWith()],
  ['containers without ports', podWith((pod) => pod.spec.containers.forEach((container) => delete container['ports']))],
  [
    'existing volumes and init containers',
    podWith((pod) => {
      pod.spec['volumes'] = [
        { name: 'data', emptyDir: {} },
        { name: 'config', configMap: { name: 'reviews' } },
      ];
      pod.spec['initContainers'] = [{ name: 'migrate', image: 'example/migrate:1' }];
      pod.spec['securityContext'] = { runAsUser: 1000, fsGroup: 2000 };
    }),
  ],
  [
    'labels and annotations whose keys need JSON-pointer escaping',
    podWith((pod) => {
      pod.metadata['labels'] = { ...(pod.metadata['labels'] as object), 'example.com/tier': 'back~end', 'a~b/c': 'x', '~0': 'y' };
      pod.metadata['annotations'] = {
        'example.com/owner': 'team/a',
        'x~1y': 'z',
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '9080',
        'prometheus.io/path': '/metrics',
      };
    }),
  ],
  [
    'no labels, no namespace, managed fields',
    podWith((pod) => {
      delete pod.metadata['labels'];
      delete pod.metadata['namespace'];
      pod.metadata['managedFields'] = [{ manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:spec': {} } }];
    }),
  ],
  [
    'a user-declared proxy container and named ports',
    podWith((pod) => {
      pod.spec.containers.push({ name: 'mesh-proxy', image: 'auto', resources: { limits: { cpu: '2' } } });
    }),
  ],
];

/** Every pod the injection golden cases inject with default settings, then the odd ones. */
function cases(): (readonly [string, Pod])[] {
  const injector = builtinInjector();
  const golden = goldenCases(FOLDER)
    .map((name) => [name, readCaseInput<Pod>(FOLDER, name)] as const)
    .filter(([, pod]) => injector.required(pod, 'foo').inject && !isInvalid(() => injector.inject({ pod, namespace: 'foo', meshConfig: meshConfigWith() })));
  return [...golden, ...ODD_PODS];
}

function isInvalid(run: () => unknown): boolean {
  try {
    run();
    return false;
  } catch {
    return true;
  }
}

function withoutManagedFields(pod: Pod): Pod {
  const copy = structuredClone(pod);
  delete (copy['metadata'] as Record<string, unknown> | undefined)?.['managedFields'];
  return copy;
}

describe('injectionPatch', () => {
  const injector = builtinInjector();

  test.each(cases())('%s: applied to the original pod (RFC 6902, by fast-json-patch) it gives the injected pod', (_name, pod) => {
    const injected = injector.inject({ pod, namespace: 'foo', meshConfig: meshConfigWith() });
    const patch = injectionPatch(pod, injected);
    // The wire form: what the API server decodes and applies.
    const operations = JSON.parse(JSON.stringify(patch)) as fastJsonPatch.Operation[];
    const applied = fastJsonPatch.applyPatch(structuredClone(pod), operations, true, false).newDocument;
    expect(applied).toEqual(JSON.parse(JSON.stringify(injected)));
    // Re-injecting the injected pod changes nothing.
    expect(injectionPatch(injected, injector.inject({ pod: injected, namespace: 'foo', meshConfig: meshConfigWith() }))).toEqual([]);
  });

  test.each(cases())("%s: the operations are those of fast-json-patch's compare, in its order", (_name, pod) => {
    const injected = injector.inject({ pod, namespace: 'foo', meshConfig: meshConfigWith() });
    const expected = fastJsonPatch.compare(withoutManagedFields(pod), withoutManagedFields(JSON.parse(JSON.stringify(injected)) as Pod));
    expect(JSON.parse(JSON.stringify(injectionPatch(pod, injected)))).toEqual(expected);
  });

  test('keys with ~ and / are escaped in paths', () => {
    const pod = ODD_PODS.find(([name]) => name.startsWith('labels and annotations'))?.[1] as Pod;
    const patch = injectionPatch(pod, injector.inject({ pod, namespace: 'foo', meshConfig: meshConfigWith() }));
    const paths = patch.map((op) => op.path);
    expect(paths).toContain('/metadata/labels/security.mesh.io~1tlsMode');
    expect(paths).toContain('/metadata/annotations/prometheus.io~1port');
    expect(paths).toContain('/metadata/annotations/sidecar.mesh.io~1status');
  });
});
