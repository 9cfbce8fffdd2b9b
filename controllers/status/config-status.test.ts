import { describe, expect, test } from '@jest/globals';
import { buildConfigStatus, describeIssues, type ConfigOutcome } from './config-status.js';

const NOW = '2026-11-01T10:00:00Z';
const EARLIER = '2026-10-01T10:00:00Z';

const valid: ConfigOutcome = {
  generation: 2,
  resourceVersion: '10',
  accepted: true,
  errors: [],
  warnings: [],
  serving: { resourceVersion: '10', generation: 2 },
};
const invalid: ConfigOutcome = {
  generation: 3,
  resourceVersion: '11',
  accepted: false,
  errors: [{ path: 'spec.mtls.mode', message: 'expected one of UNSET, DISABLE, PERMISSIVE, STRICT' }],
  warnings: [],
  serving: { resourceVersion: '10', generation: 2 },
};

describe('config status', () => {
  test.each([
    [
      'valid',
      valid,
      [
        { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'the resource is valid' },
        { type: 'Reconciled', status: 'True', reason: 'Reconciled', message: 'this version is serving in the mesh' },
      ],
    ],
    [
      'invalid with a last good version',
      invalid,
      [
        { type: 'Accepted', status: 'False', reason: 'Invalid', message: 'spec.mtls.mode: expected one of UNSET, DISABLE, PERMISSIVE, STRICT' },
        {
          type: 'Reconciled',
          status: 'False',
          reason: 'LastGoodVersionServing',
          message: 'this version is rejected; the last valid version (generation 2) keeps serving',
        },
      ],
    ],
    [
      'invalid and never valid',
      { ...invalid, serving: undefined },
      [
        { type: 'Accepted', status: 'False', reason: 'Invalid', message: 'spec.mtls.mode: expected one of UNSET, DISABLE, PERMISSIVE, STRICT' },
        { type: 'Reconciled', status: 'False', reason: 'Rejected', message: 'this version is rejected and no earlier version is serving' },
      ],
    ],
  ])('conditions of a %s object', (_name, outcome, expected) => {
    const patch = buildConfigStatus(outcome, undefined, NOW, { conditions: true, analysis: false });
    expect(patch?.conditions).toEqual(expected.map((condition) => ({ ...condition, lastTransitionTime: NOW, observedGeneration: outcome.generation })));
    expect(patch?.observedGeneration).toBe(outcome.generation);
    expect(patch).not.toHaveProperty('validationMessages');
  });

  test('a status already written is not written again; a transition time survives a message change', () => {
    const first = buildConfigStatus(invalid, undefined, EARLIER, { conditions: true, analysis: true });
    expect(buildConfigStatus(invalid, first, NOW, { conditions: true, analysis: true })).toBeUndefined();
    const otherError = { ...invalid, errors: [{ path: 'spec.selector', message: 'expected labels' }] };
    const second = buildConfigStatus(otherError, first, NOW, { conditions: true, analysis: true });
    expect(second?.conditions?.map((c) => c.lastTransitionTime)).toEqual([EARLIER, EARLIER]);
    const fixed = buildConfigStatus(valid, second, NOW, { conditions: true, analysis: true });
    expect(fixed?.conditions?.map((c) => c.lastTransitionTime)).toEqual([NOW, NOW]);
    expect(fixed?.validationMessages).toBeNull();
  });

  test('analysis writes errors and warnings as messages, alone when conditions are off', () => {
    const warned = { ...valid, warnings: [{ path: 'spec.portLevelMtls["9"]', message: 'port 9 is not a target port' }] };
    const patch = buildConfigStatus(warned, {}, NOW, { conditions: false, analysis: true });
    expect(patch).toEqual({ validationMessages: [{ level: 'Warning', path: 'spec.portLevelMtls["9"]', message: 'port 9 is not a target port' }] });
    expect(buildConfigStatus(valid, {}, NOW, { conditions: false, analysis: true })).toBeUndefined();
  });

  test('long issue lists are cut', () => {
    const issues = Array.from({ length: 12 }, (_, i) => ({ path: `spec.rules[${i}]`, message: 'bad' }));
    expect(describeIssues(issues)).toMatch(/spec\.rules\[9\]: bad; and 2 more$/);
  });
});
