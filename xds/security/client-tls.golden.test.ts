import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { stringify } from 'yaml';
import { buildPushContext, newSidecarCdsGenerator, newSidecarEdsGenerator } from '../generators/index.js';
import { listCases, loadCase } from '../generators/testing/test-cases.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, loadEnvoyProtos, type EnvoyProtos, type GenerateRequest, type GenerateResult } from '../index.js';
import { newClientTlsHook } from './client-tls.js';

const TESTDATA = fileURLToPath(new URL('./testdata/client-tls/', import.meta.url));
const refreshGolden = process.env['REFRESH_GOLDEN'] === '1';
const FULL: GenerateRequest = { names: [], full: true, configsUpdated: [] };

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

function resourcesOf(result: GenerateResult | undefined): Record<string, unknown>[] {
  return (result?.resources ?? []).map((named) => (typeof named.resource === 'function' ? named.resource() : named.resource) as Record<string, unknown>);
}

const cases = listCases(TESTDATA);

describe('client TLS of outbound clusters and endpoint labels (golden)', () => {
  test('covers every DestinationRule mode and the PeerAuthentication label rule', () => {
    expect(cases).toEqual(
      expect.arrayContaining(['auto-mtls', 'disable', 'simple-credential', 'mutual-files', 'mesh-mutual', 'port-level-and-subsets', 'peer-authentication-disable']),
    );
  });

  test.each(cases)('%s', (name) => {
    const { model, proxy } = loadCase(TESTDATA, `${name}.in.yaml`);
    const push = buildPushContext(model);
    const clusters = resourcesOf(newSidecarCdsGenerator({ clusterTransportSocket: newClientTlsHook() }).generate(proxy, push, FULL)).filter((cluster) =>
      String(cluster['name']).startsWith('outbound|'),
    );
    const edsNames = clusters.filter((cluster) => cluster['type'] === 'EDS').map((cluster) => cluster['name'] as string);
    const endpoints = resourcesOf(newSidecarEdsGenerator().generate(proxy, push, { ...FULL, names: edsNames }));

    // Every resource is a valid Envoy message: the strict encoder throws on unknown fields.
    for (const cluster of clusters) expect(() => protos.encodeAny(CLUSTER_TYPE, cluster)).not.toThrow();
    for (const assignment of endpoints) expect(() => protos.encodeAny(ENDPOINT_TYPE, assignment)).not.toThrow();
    // Consistency: every EDS cluster has its assignment.
    expect(endpoints.map((assignment) => assignment['cluster_name'])).toEqual([...edsNames].sort());
    // A cluster has either matches (auto mTLS) or one socket, never both.
    for (const cluster of clusters) expect('transport_socket' in cluster && 'transport_socket_matches' in cluster).toBe(false);

    const actual = stringify({ clusters, endpoints }, { lineWidth: 0, aliasDuplicateObjects: false });
    const golden = join(TESTDATA, `${name}.golden.yaml`);
    if (refreshGolden) writeFileSync(golden, actual);
    else expect(actual).toBe(readFileSync(golden, 'utf8'));
  });
});
