import { describe, expect, test } from '@jest/globals';
import { newPolicyIndex, type SelectablePolicy } from './policy-index.js';

interface Policy extends SelectablePolicy {
  readonly metadata: { readonly namespace: string; readonly name: string };
}

function policy(namespace: string, name: string, matchLabels?: Record<string, string>): Policy {
  return { metadata: { namespace, name }, spec: matchLabels ? { selector: { matchLabels } } : {} };
}

const names = (policies: readonly Policy[]): string[] => policies.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);

describe('the policy index', () => {
  // Sorted by namespace, then name, as the push context hands them over; the root namespace sorts
  // before one workload namespace and after another.
  const policies = [
    policy('alpha', 'all'),
    policy('alpha', 'web', { app: 'web' }),
    policy('mesh-system', 'mesh-wide'),
    policy('mesh-system', 'selected-in-root', { app: 'web' }),
    policy('zulu', 'all'),
    policy('zulu', 'web-v2', { app: 'web', version: 'v2' }),
  ];
  const index = newPolicyIndex(policies, 'mesh-system');

  test('a workload gets the mesh-wide, its namespace-wide and its selecting policies, in namespace then name order', () => {
    expect(names(index.forWorkload('alpha', { app: 'web' }))).toEqual(['alpha/all', 'alpha/web', 'mesh-system/mesh-wide']);
    expect(names(index.forWorkload('zulu', { version: 'v2', app: 'web' }))).toEqual(['mesh-system/mesh-wide', 'zulu/all', 'zulu/web-v2']);
    expect(names(index.forWorkload('zulu', { app: 'web' }))).toEqual(['mesh-system/mesh-wide', 'zulu/all']);
  });

  test('a selector in the root namespace selects only the root namespace’s own workloads', () => {
    expect(names(index.forWorkload('mesh-system', { app: 'web' }))).toEqual(['mesh-system/mesh-wide', 'mesh-system/selected-in-root']);
    expect(names(index.forWorkload('alpha', { app: 'other' }))).toEqual(['alpha/all', 'mesh-system/mesh-wide']);
  });

  test('a namespace without policies gets the mesh-wide ones; the candidates keep the global order', () => {
    expect(names(index.forWorkload('bravo', { app: 'web' }))).toEqual(['mesh-system/mesh-wide']);
    expect(names(index.candidates('zulu'))).toEqual(['mesh-system/mesh-wide', 'mesh-system/selected-in-root', 'zulu/all', 'zulu/web-v2']);
  });

  test('the same labels in another order are the same workload, and a look-alike label set is not', () => {
    const first = index.forWorkload('zulu', { app: 'web', version: 'v2' });
    expect(index.forWorkload('zulu', { version: 'v2', app: 'web' })).toBe(first);
    // A value carrying the next label's text must not read as two labels.
    expect(names(index.forWorkload('zulu', { app: 'web\nversion=v2' }))).toEqual(['mesh-system/mesh-wide', 'zulu/all']);
  });
});
