import { beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { newMetrics, newNopLogger } from '../runtime/index.js';
import { DEFAULT_MESH_CONFIG } from '../crds/index.js';
import { fuzzParameters } from '../testing/fuzz.js';
import type { AdmissionRequest } from './admission-review.js';
import { BUILTIN_INJECTOR_CONFIG } from './inject/index.js';
import { newInjectionWebhook, type InjectionWebhook } from './injection-webhook.js';

// The injection webhook on an attacker's pod: any object (odd annotations, containers that are not
// objects, ports that are strings, huge names) gets an allow (with or without a patch) or a denial
// with a message, never a throw out of the handler.
let webhook: InjectionWebhook;

beforeAll(() => {
  webhook = newInjectionWebhook({
    settings: {
      injectEnabled: true,
      injectionWebhookConfigName: 'mesh-sidecar-injector',
      legacyFsGroup: true,
      rewriteProbeLegacyLocalhost: false,
      revision: '',
    },
    meshConfig: () => DEFAULT_MESH_CONFIG,
    metrics: newMetrics('pilot-discovery'),
    log: newNopLogger(),
  });
  expect(webhook.offer({ text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' })).toBe(true);
});

const annotations = fc.dictionary(
  fc.constantFrom(
    'sidecar.mesh.io/inject',
    'sidecar.mesh.io/interceptionMode',
    'traffic.sidecar.mesh.io/includeOutboundIPRanges',
    'traffic.sidecar.mesh.io/excludeInboundPorts',
    'sidecar.mesh.io/proxyCPU',
    'proxy.mesh.io/config',
    'status.sidecar.mesh.io/port',
    'sidecar.mesh.io/status',
    'inject.mesh.io/templates',
    'x',
  ),
  fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('true', 'false', 'NONE', 'TPROXY', '*', '0', '-1', '10.0.0.0/33', '{', 'tracing: {')),
);
const container = fc.oneof(
  fc.record(
    {
      name: fc.string({ maxLength: 20 }),
      image: fc.string({ maxLength: 20 }),
      ports: fc.array(fc.record({ containerPort: fc.oneof(fc.integer(), fc.string({ maxLength: 6 })) }), { maxLength: 3 }),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);
const pod = fc.record(
  {
    apiVersion: fc.constantFrom('v1', 'x'),
    kind: fc.constantFrom('Pod', 'Deployment'),
    metadata: fc.record(
      {
        name: fc.string({ maxLength: 30 }),
        generateName: fc.string({ maxLength: 10 }),
        labels: fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })),
        annotations,
      },
      { requiredKeys: [] },
    ),
    spec: fc.oneof(
      fc.record(
        { containers: fc.array(container, { maxLength: 3 }), initContainers: fc.array(container, { maxLength: 2 }), hostNetwork: fc.boolean() },
        { requiredKeys: [] },
      ),
      fc.jsonValue(),
    ),
  },
  { requiredKeys: [] },
);

describe('the injection webhook under fuzzing', () => {
  test('any pod object gets an allow or a denial with a message', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(pod, fc.jsonValue()), fc.constantFrom('foo', 'kube-system', ''), async (object, namespace) => {
        const request: AdmissionRequest = {
          uid: 'u',
          kind: { group: '', version: 'v1', kind: 'Pod' },
          resource: { group: '', version: 'v1', resource: 'pods' },
          name: '',
          namespace,
          operation: 'CREATE',
          object,
          dryRun: false,
        };
        const response = await webhook.route.handle(request, '/inject');
        expect(typeof response.allowed).toBe('boolean');
        if (!response.allowed) expect(response.message ?? '').not.toBe('');
      }),
      fuzzParameters(),
    );
  });
});
