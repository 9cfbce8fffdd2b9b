import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { expectGolden, goldenCases } from '../../testing/golden.js';
import { newSidecarCdsGenerator, newSidecarEdsGenerator, newSidecarLdsGenerator, newSidecarRdsGenerator } from '../generators/index.js';
import { buildPushContext } from '../model/index.js';
import { generateSnapshot, loadCase } from '../generators/testing/test-cases.js';
import { consistent } from '../testing/consistent.js';
import { loadEnvoyProtos, type EnvoyProtos } from '../index.js';
import { newClientTlsHook } from './client-tls.js';

const TESTDATA = fileURLToPath(new URL('./testdata/client-tls/', import.meta.url));

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

const cases = goldenCases(TESTDATA);

describe('client TLS of outbound clusters and endpoint labels (golden)', () => {
  test('covers every DestinationRule mode and the PeerAuthentication label rule', () => {
    expect(cases).toEqual(
      expect.arrayContaining([
        'auto-mtls',
        'disable',
        'simple-credential',
        'mutual-files',
        'mesh-mutual',
        'port-level-and-subsets',
        'peer-authentication-disable',
      ]),
    );
  });

  test.each(cases)('%s', (name) => {
    const { model, proxy } = loadCase(TESTDATA, `${name}.in.yaml`);
    const generators = {
      lds: newSidecarLdsGenerator(),
      rds: newSidecarRdsGenerator(),
      cds: newSidecarCdsGenerator({ clusterTransportSocket: newClientTlsHook() }),
      eds: newSidecarEdsGenerator(),
    };
    // Every resource passed the strict encoder (unknown fields throw); the snapshot hangs together.
    const snapshot = generateSnapshot(proxy, buildPushContext(model), generators, protos);
    expect(consistent(snapshot)).toEqual([]);
    const clusters = snapshot.clusters.filter((cluster) => String(cluster['name']).startsWith('outbound|'));
    const edsNames = new Set(clusters.filter((cluster) => cluster['type'] === 'EDS').map((cluster) => cluster['name']));
    const endpoints = snapshot.endpoints.filter((assignment) => edsNames.has(assignment['cluster_name']));
    // A cluster has either matches (auto mTLS) or one socket, never both.
    for (const cluster of clusters) expect('transport_socket' in cluster && 'transport_socket_matches' in cluster).toBe(false);
    expectGolden(TESTDATA, name, { clusters, endpoints });
  });
});
