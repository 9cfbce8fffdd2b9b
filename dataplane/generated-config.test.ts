import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { loadEnvoyProtos, type EnvoyProtos } from '../xds/envoy/envoy-protos.js';
import { buildPushContext } from '../xds/model/index.js';
import { goldenCases } from '../testing/golden.js';
import { loadCase } from '../xds/generators/testing/test-cases.js';
import { newMeshGenerators } from '../xds/mesh-generators.js';
import type { ConnectionFacts } from './decisions/index.js';
import { simulateProxyConfig } from './testing/simulation-support.js';
import type { ConfigSnapshot } from './config-state.js';

const SIDECAR_CASES = fileURLToPath(new URL('../xds/generators/sidecar/testdata/cds/', import.meta.url));
const LDS_CASES = fileURLToPath(new URL('../xds/generators/sidecar/testdata/lds/', import.meta.url));

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

function simulate(folder: string, name: string): ConfigSnapshot {
  const { model, proxy } = loadCase(folder, `${name}.in.yaml`);
  return simulateProxyConfig(protos, newMeshGenerators(), proxy, buildPushContext(model));
}

const inbound = (port: number, transportProtocol: 'tls' | 'raw_buffer'): ConnectionFacts => ({
  destinationAddress: '10.0.1.10',
  destinationPort: port,
  sourceAddress: '10.0.9.9',
  transportProtocol,
});

function chainFor(snapshot: ConfigSnapshot, facts: ConnectionFacts): string {
  const decision = snapshot.decisions.connection('virtualInbound', facts);
  return decision.kind === 'accept' ? `${decision.chain}${decision.downstreamTls ? ' (mutual TLS)' : ''}` : 'reset';
}

describe('the embedded data plane accepts what the daemon generates', () => {
  const cases = [
    ...goldenCases(SIDECAR_CASES).map((name) => ({ label: `sidecar ${name}`, folder: SIDECAR_CASES, name })),
    ...goldenCases(LDS_CASES).map((name) => ({ label: `lds ${name}`, folder: LDS_CASES, name })),
  ];
  test.each(cases)('$label', ({ folder, name }) => {
    const snapshot = simulate(folder, name);
    expect(snapshot.resources.clusters.size).toBeGreaterThan(0);
    expect(snapshot.resources.listeners.map((listener) => listener.name)).toContain('virtualInbound');
  });
});

describe('inbound mutual TLS by mode, decided over generated config (seed 1)', () => {
  test('no policy (PERMISSIVE): mutual TLS and plain text both accepted', () => {
    const snapshot = simulate(LDS_CASES, 'no-policy');
    expect(chainFor(snapshot, inbound(80, 'tls'))).toBe('0.0.0.0_80 (mutual TLS)');
    expect(chainFor(snapshot, inbound(80, 'raw_buffer'))).toBe('0.0.0.0_80');
  });

  test('mesh-wide STRICT: plain text is reset, on service ports and others', () => {
    const snapshot = simulate(LDS_CASES, 'mesh-strict');
    expect(chainFor(snapshot, inbound(80, 'raw_buffer'))).toBe('reset');
    expect(chainFor(snapshot, inbound(80, 'tls'))).toBe('0.0.0.0_80 (mutual TLS)');
    expect(chainFor(snapshot, inbound(7777, 'raw_buffer'))).toBe('reset');
  });

  test('workload STRICT with container port 80 DISABLE: plain text on 80 only', () => {
    const snapshot = simulate(LDS_CASES, 'port-level-disable');
    expect(chainFor(snapshot, inbound(80, 'raw_buffer'))).toBe('0.0.0.0_80');
    expect(chainFor(snapshot, inbound(8080, 'raw_buffer'))).toBe('reset');
    expect(chainFor(snapshot, inbound(8080, 'tls'))).toBe('0.0.0.0_8080 (mutual TLS)');
  });

  test('workload DISABLE overrides namespace STRICT', () => {
    const snapshot = simulate(LDS_CASES, 'workload-disable');
    expect(chainFor(snapshot, inbound(80, 'raw_buffer'))).toBe('0.0.0.0_80');
    expect(chainFor(snapshot, inbound(8080, 'raw_buffer'))).toBe('0.0.0.0_8080');
  });

  test('namespace STRICT on a TCP port', () => {
    const snapshot = simulate(LDS_CASES, 'tcp-strict');
    const facts = { ...inbound(6379, 'raw_buffer'), destinationAddress: '10.0.2.10' };
    expect(chainFor(snapshot, facts)).toBe('reset');
    expect(chainFor(snapshot, { ...facts, transportProtocol: 'tls' })).toBe('0.0.0.0_6379 (mutual TLS)');
  });
});
