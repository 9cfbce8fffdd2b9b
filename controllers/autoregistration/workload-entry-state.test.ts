import { describe, expect, test } from '@jest/globals';
import {
  autoRegisteredEntryName,
  isHealthyEntry,
  mayMarkDisconnected,
  shouldCleanup,
  withConnected,
  withDisconnected,
  type WorkloadEntryObject,
} from './workload-entry-state.js';

const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const GRACE = 10_000;
const AGE = 60_000;

function entry(annotations: Record<string, string>, status?: WorkloadEntryObject['status']): WorkloadEntryObject {
  return {
    apiVersion: 'networking.mesh.io/v1alpha3',
    kind: 'WorkloadEntry',
    metadata: { name: 'e', namespace: 'vm', annotations },
    spec: {},
    ...(status ? { status } : {}),
  };
}

describe('autoRegisteredEntryName', () => {
  test.each([
    ['ratings', '10.0.0.1', undefined, 'ratings-10.0.0.1'],
    ['ratings', '10.0.0.1', 'vm-net', 'ratings-10.0.0.1-vm-net'],
    ['ratings', 'fd00::1', undefined, 'ratings-fd00--1'],
  ])('%s %s %s → %s', (group, ip, network, name) => expect(autoRegisteredEntryName(group, ip, network)).toBe(name));

  test('over 253 characters it keeps its end', () => {
    const name = autoRegisteredEntryName('g'.repeat(260), '10.0.0.1');
    expect(name).toHaveLength(253);
    expect(name.endsWith('g-10.0.0.1')).toBe(true);
  });
});

describe('connect and disconnect marks', () => {
  const connected = withConnected(entry({ 'mesh.io/autoRegistrationGroup': 'g', 'mesh.io/disconnectedAt': 'x' }), 'meshd-a', T0);

  test('connect names this daemon and drops the disconnect mark; disconnect drops connectedAt', () => {
    expect(connected.metadata.annotations).toEqual({
      'mesh.io/autoRegistrationGroup': 'g',
      'mesh.io/workloadController': 'meshd-a',
      'mesh.io/connectedAt': '2024-05-01T10:00:00.000Z',
    });
    expect(withDisconnected(connected, T0 + 5).metadata.annotations).toEqual({
      'mesh.io/autoRegistrationGroup': 'g',
      'mesh.io/workloadController': 'meshd-a',
      'mesh.io/disconnectedAt': '2024-05-01T10:00:00.005Z',
    });
  });

  test.each([
    ['the controller, no newer connect', 'meshd-a', T0, T0 + 5, true],
    ['another daemon controls it', 'meshd-b', T0, T0 + 5, false],
    ['a newer connect was written', 'meshd-a', T0 - 1, T0 + 5, false],
    ['the disconnect is older than the connect written', 'meshd-a', T0, T0 - 1, false],
  ])('%s', (_case, instance, connectedAt, disconnectedAt, may) => expect(mayMarkDisconnected(connected, instance, connectedAt, disconnectedAt)).toBe(may));
});

describe('shouldCleanup', () => {
  const healthy = { conditions: [{ type: 'Healthy', status: 'True' as const }] };
  test.each([
    [
      'auto-registered, disconnected past the grace period',
      entry({ 'mesh.io/autoRegistrationGroup': 'g', 'mesh.io/disconnectedAt': new Date(T0).toISOString() }),
      T0 + GRACE,
      true,
    ],
    [
      'auto-registered, within the grace period',
      entry({ 'mesh.io/autoRegistrationGroup': 'g', 'mesh.io/disconnectedAt': new Date(T0).toISOString() }),
      T0 + GRACE - 1,
      false,
    ],
    ['connected', entry({ 'mesh.io/autoRegistrationGroup': 'g', 'mesh.io/connectedAt': new Date(T0).toISOString() }), T0 + GRACE, false],
    [
      'marked connected 2.25 × the connection age ago',
      entry({ 'mesh.io/autoRegistrationGroup': 'g', 'mesh.io/connectedAt': new Date(T0).toISOString() }),
      T0 + AGE * 2.25 + 1,
      true,
    ],
    ['neither auto-registered nor health-checked', entry({ 'mesh.io/disconnectedAt': new Date(T0).toISOString() }), T0 + GRACE, false],
    [
      'health-checked with a condition',
      entry({ 'mesh.io/workloadController': 'a', 'mesh.io/disconnectedAt': new Date(T0).toISOString() }, healthy),
      T0 + GRACE,
      true,
    ],
    [
      'health-checked without a condition',
      entry({ 'mesh.io/workloadController': 'a', 'mesh.io/disconnectedAt': new Date(T0).toISOString() }),
      T0 + GRACE,
      false,
    ],
  ])('%s', (_case, candidate, now, expected) => expect(shouldCleanup(candidate, now, GRACE, AGE)).toBe(expected));
});

describe('isHealthyEntry', () => {
  test.each([
    ['no health checks', {}, undefined, true],
    ['health checks, nothing reported', { 'proxy.mesh.io/health-checks-enabled': 'true' }, undefined, false],
    ['health checks, Healthy=True', { 'proxy.mesh.io/health-checks-enabled': 'true' }, { conditions: [{ type: 'Healthy', status: 'True' }] }, true],
    ['health checks, Healthy=False', { 'proxy.mesh.io/health-checks-enabled': 'true' }, { conditions: [{ type: 'Healthy', status: 'False' }] }, false],
    [
      'annotation not true: reports do not count',
      { 'proxy.mesh.io/health-checks-enabled': 'false' },
      { conditions: [{ type: 'Healthy', status: 'False' }] },
      true,
    ],
  ])('%s', (_case, annotations, status, ready) => expect(isHealthyEntry(annotations, status)).toBe(ready));
});
