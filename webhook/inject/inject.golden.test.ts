import { describe, expect, test } from '@jest/globals';
import { expectGolden, goldenCases, readCaseInput } from '../../testing/golden.js';
import { errorMessage } from '../../runtime/index.js';
import type { InjectParams } from './injector.js';
import { readInjectionStatus } from './injection-status.js';
import type { Pod } from './pod.js';
import { builtinInjector, meshConfigWith } from './testing/injector-fixture.js';
import { uninjectPod } from './uninject.js';

const FOLDER = 'webhook/inject/testdata/inject';

/** What a case changes beyond its pod: the injector's values, the mesh config, the request. */
interface CaseSetup {
  /** False where uninjection cannot tell what injection added (CNI mode writes its capture settings back as annotations). */
  roundTrip?: boolean;
  values?: Record<string, unknown>;
  meshConfig?: string;
  params?: Partial<Omit<InjectParams, 'pod' | 'meshConfig'>>;
}

const SETUPS: Readonly<Record<string, CaseSetup>> = {
  revision: { params: { revision: 'canary' } },
  'url-env-legacy-probes': {
    params: {
      urlEnv: { MESH_META_CLUSTER_ID: 'east', MESH_META_NETWORK: 'net-east', EXTRA_FLAG: 'on' },
      rewriteProbeLegacyLocalhost: true,
      legacyFsGroup: false,
    },
  },
  'values-overrides': {
    values: {
      global: {
        imagePullSecrets: ['reg-secret'],
        meshID: 'mesh1',
        caAddress: 'custom-ca.example:15012',
        hub: 'registry.example/mesh',
        tag: '1.2.3',
        logAsJson: true,
        imagePullPolicy: 'IfNotPresent',
      },
    },
    meshConfig: 'trustDomain: example.org\nenablePrometheusMerge: false\n',
  },
  cni: { values: { mesh_cni: { enabled: true } }, roundTrip: false },
};

type Outcome = Pod | { skipped: string } | { error: string };

function run(name: string, pod: Pod): Outcome {
  const setup = SETUPS[name] ?? {};
  const injector = builtinInjector(setup.values);
  const namespace = String((pod['metadata'] as Record<string, unknown>)['namespace']);
  const decision = injector.required(pod, namespace);
  if (!decision.inject) return { skipped: decision.reason };
  try {
    return injector.inject({ namespace, ...setup.params, pod, meshConfig: meshConfigWith(setup.meshConfig) });
  } catch (error) {
    return { error: errorMessage(error) };
  }
}

describe('injection golden cases', () => {
  test.each(goldenCases(FOLDER))('%s', (name) => {
    const pod = readCaseInput<Pod>(FOLDER, name);
    const outcome = run(name, pod);
    expectGolden(FOLDER, name, outcome);
    if ('skipped' in outcome || 'error' in outcome) return;
    // Injecting an injected pod gives the same pod.
    expect(run(name, outcome)).toEqual(outcome);
    // Uninjecting gives back the app's pod (an injected input's app pod is its own uninjection).
    if (SETUPS[name]?.roundTrip === false) return;
    expect(uninjectPod(outcome)).toEqual(readInjectionStatus(pod) ? uninjectPod(pod) : resolveRewrittenProbePorts(pod, outcome));
  });
});

/**
 * Uninjection restores probes from MESH_ORCH_APP_PROBERS, where the reference writes named ports
 * as numbers; the round trip compares with the input's rewritten probes so resolved.
 */
function resolveRewrittenProbePorts(pod: Pod, injected: Pod): Pod {
  const copy = structuredClone(pod);
  const containers = ((copy['spec'] as Record<string, unknown>)['containers'] ?? []) as Record<string, unknown>[];
  const injectedContainers = ((injected['spec'] as Record<string, unknown>)['containers'] ?? []) as Record<string, unknown>[];
  for (const container of containers) {
    const ports = (container['ports'] ?? []) as Record<string, unknown>[];
    const after = injectedContainers.find((c) => c['name'] === container['name']) ?? {};
    for (const field of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
      const httpGet = (container[field] as Record<string, unknown> | undefined)?.['httpGet'] as Record<string, unknown> | undefined;
      const rewritten = (after[field] as Record<string, unknown> | undefined)?.['httpGet'] as Record<string, unknown> | undefined;
      const named = ports.find((port) => port['name'] === httpGet?.['port']);
      if (httpGet && named && String(rewritten?.['path']).startsWith('/app-health/')) httpGet['port'] = named['containerPort'];
    }
  }
  return copy;
}
