import { describe, expect, test } from '@jest/globals';
import type { MtlsMode, PeerAuthentication } from '../../crds/index.js';
import { composePeerAuthentication, mtlsModeForPort, type EffectiveMtlsMode } from './peer-authentication.js';

const ROOT = 'mesh-system';

interface PolicyOptions {
  selector?: Record<string, string>;
  mode?: MtlsMode;
  ports?: Record<string, MtlsMode>;
  created?: string;
}

function pa(namespace: string, name: string, options: PolicyOptions = {}): PeerAuthentication {
  return {
    apiVersion: 'security.mesh.io/v1beta1',
    kind: 'PeerAuthentication',
    metadata: { name, namespace, creationTimestamp: options.created ?? '2026-01-01T00:00:00Z' },
    spec: {
      ...(options.selector ? { selector: { matchLabels: options.selector } } : {}),
      ...(options.mode ? { mtls: { mode: options.mode } } : {}),
      ...(options.ports ? { portLevelMtls: Object.fromEntries(Object.entries(options.ports).map(([port, mode]) => [port, { mode }])) } : {}),
    },
  };
}

const httpbin = { namespace: 'foo', labels: { app: 'httpbin', version: 'v1' } };
const sleep = { namespace: 'foo', labels: { app: 'sleep' } };
const barHttpbin = { namespace: 'bar', labels: { app: 'httpbin' } };
const legacy = { namespace: 'legacy', labels: { app: 'httpbin' } };

interface Case {
  name: string;
  policies: PeerAuthentication[];
  workload: { namespace: string; labels: Record<string, string> };
  bound?: number[];
  mode: EffectiveMtlsMode;
  ports?: Record<number, EffectiveMtlsMode>;
}

const cases: Case[] = [
  // Seed 1, behaviour table.
  { name: 'seed: no policy is PERMISSIVE', policies: [], workload: httpbin, mode: 'PERMISSIVE' },
  { name: 'seed: mesh-wide STRICT applies in every namespace', policies: [pa(ROOT, 'default', { mode: 'STRICT' })], workload: legacy, mode: 'STRICT' },
  { name: 'seed: namespace STRICT applies in its namespace', policies: [pa('foo', 'default', { mode: 'STRICT' })], workload: httpbin, mode: 'STRICT' },
  { name: 'seed: namespace STRICT leaves other namespaces', policies: [pa('foo', 'default', { mode: 'STRICT' })], workload: barHttpbin, mode: 'PERMISSIVE' },
  {
    name: 'seed: workload STRICT applies to the selected workload',
    policies: [pa('foo', 'httpbin', { selector: { app: 'httpbin' }, mode: 'STRICT' })],
    workload: httpbin,
    mode: 'STRICT',
  },
  {
    name: 'seed: workload STRICT leaves other workloads of the namespace',
    policies: [pa('foo', 'httpbin', { selector: { app: 'httpbin' }, mode: 'STRICT' })],
    workload: sleep,
    mode: 'PERMISSIVE',
  },
  {
    name: 'seed: workload STRICT with one bound container port DISABLE',
    policies: [pa('foo', 'httpbin', { selector: { app: 'httpbin' }, mode: 'STRICT', ports: { '80': 'DISABLE' } })],
    workload: httpbin,
    bound: [80],
    mode: 'STRICT',
    ports: { 80: 'DISABLE' },
  },
  {
    name: 'seed: workload DISABLE overrides namespace STRICT',
    policies: [pa('foo', 'default', { mode: 'STRICT' }), pa('foo', 'httpbin', { selector: { app: 'httpbin' }, mode: 'DISABLE' })],
    workload: httpbin,
    mode: 'DISABLE',
  },
  // Composition rules.
  {
    name: 'namespace overrides mesh',
    policies: [pa(ROOT, 'default', { mode: 'STRICT' }), pa('foo', 'default', { mode: 'PERMISSIVE' })],
    workload: httpbin,
    mode: 'PERMISSIVE',
  },
  {
    name: 'namespace UNSET inherits mesh',
    policies: [pa(ROOT, 'default', { mode: 'STRICT' }), pa('foo', 'default', { mode: 'UNSET' })],
    workload: httpbin,
    mode: 'STRICT',
  },
  {
    name: 'no mtls field inherits',
    policies: [pa(ROOT, 'default', { mode: 'DISABLE' }), pa('foo', 'default')],
    workload: httpbin,
    mode: 'DISABLE',
  },
  {
    name: 'oldest mesh-wide policy wins',
    policies: [pa(ROOT, 'newer', { mode: 'DISABLE', created: '2026-03-01T00:00:00Z' }), pa(ROOT, 'older', { mode: 'STRICT', created: '2026-02-01T00:00:00Z' })],
    workload: httpbin,
    mode: 'STRICT',
  },
  {
    name: 'equal timestamps: the first name wins',
    policies: [pa('foo', 'zeta', { mode: 'DISABLE' }), pa('foo', 'alpha', { mode: 'STRICT' })],
    workload: httpbin,
    mode: 'STRICT',
  },
  {
    name: 'oldest workload policy wins',
    policies: [
      pa('foo', 'a', { selector: { app: 'httpbin' }, mode: 'DISABLE', created: '2026-05-01T00:00:00Z' }),
      pa('foo', 'b', { selector: { version: 'v1' }, mode: 'STRICT', created: '2026-04-01T00:00:00Z' }),
    ],
    workload: httpbin,
    mode: 'STRICT',
  },
  {
    name: 'a selector policy in the root namespace is not workload level',
    policies: [pa(ROOT, 'sel', { selector: { app: 'httpbin' }, mode: 'STRICT' })],
    workload: { namespace: ROOT, labels: { app: 'httpbin' } },
    mode: 'PERMISSIVE',
  },
  {
    name: 'a selector policy of another namespace does not apply',
    policies: [pa('bar', 'sel', { selector: { app: 'httpbin' }, mode: 'STRICT' })],
    workload: httpbin,
    mode: 'PERMISSIVE',
  },
  {
    name: 'a namespace-wide policy of another namespace does not apply',
    policies: [pa('bar', 'default', { mode: 'STRICT' })],
    workload: httpbin,
    mode: 'PERMISSIVE',
  },
  {
    name: 'workload UNSET with a port level mode inherits namespace',
    policies: [pa('foo', 'default', { mode: 'STRICT' }), pa('foo', 'w', { selector: { app: 'httpbin' }, ports: { '8080': 'DISABLE' } })],
    workload: httpbin,
    mode: 'STRICT',
    ports: { 8080: 'DISABLE' },
  },
  {
    name: 'port UNSET inherits the workload mode',
    policies: [pa('foo', 'w', { selector: { app: 'httpbin' }, mode: 'DISABLE', ports: { '80': 'UNSET', '81': 'STRICT' } })],
    workload: httpbin,
    mode: 'DISABLE',
    ports: { 80: 'DISABLE', 81: 'STRICT' },
  },
  {
    name: 'port level on a port no service binds is ignored',
    policies: [pa('foo', 'w', { selector: { app: 'httpbin' }, mode: 'STRICT', ports: { '80': 'DISABLE', '9090': 'DISABLE' } })],
    workload: httpbin,
    bound: [80],
    mode: 'STRICT',
    ports: { 80: 'DISABLE' },
  },
  {
    name: 'port level of a namespace-wide policy is not read',
    policies: [pa('foo', 'default', { mode: 'STRICT', ports: { '80': 'DISABLE' } })],
    workload: httpbin,
    mode: 'STRICT',
  },
];

describe('composePeerAuthentication', () => {
  test.each(cases)('$name', ({ policies, workload, bound, mode, ports }) => {
    const result = composePeerAuthentication({
      rootNamespace: ROOT,
      policies,
      workload,
      ...(bound ? { boundPorts: (port: number) => bound.includes(port) } : {}),
    });
    expect(result.mode).toBe(mode);
    expect(Object.fromEntries(result.portModes)).toEqual(Object.fromEntries(Object.entries(ports ?? {}).map(([k, v]) => [k, v])));
  });

  test('mtlsModeForPort falls back to the workload mode', () => {
    const result = composePeerAuthentication({
      rootNamespace: ROOT,
      policies: [pa('foo', 'w', { selector: { app: 'httpbin' }, mode: 'STRICT', ports: { '80': 'DISABLE' } })],
      workload: httpbin,
    });
    expect(mtlsModeForPort(result, 80)).toBe('DISABLE');
    expect(mtlsModeForPort(result, 8080)).toBe('STRICT');
  });
});
