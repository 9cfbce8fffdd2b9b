import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { expectGolden, goldenCases } from '../../../testing/golden.js';
import { consistent } from '../../testing/consistent.js';
import { loadEnvoyProtos, type EnvoyProtos } from '../../index.js';
import { generateSnapshot, loadCase, required } from '../testing/test-cases.js';
import { newGrpcGenerators } from '../index.js';
import { buildPushContext } from '../../model/index.js';

const TESTDATA = fileURLToPath(new URL('./testdata/snapshot/', import.meta.url));

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

describe('proxyless gRPC generators (golden)', () => {
  test.each(goldenCases(TESTDATA))('%s', (name) => {
    const { model, proxy, routeNames: listenerNames } = loadCase(TESTDATA, `${name}.in.yaml`);
    const [lds, rds, cds, eds] = newGrpcGenerators();
    const generators = { lds: required(lds, 'LDS'), rds: required(rds, 'RDS'), cds: required(cds, 'CDS'), eds: required(eds, 'EDS') };
    const snapshot = generateSnapshot(proxy, buildPushContext(model), generators, protos, { listenerNames, clustersFromRoutes: true });
    const { listeners, routes, clusters, endpoints } = snapshot;
    expect(listeners.map((listener) => listener['name'])).toEqual(listenerNames);
    expect(consistent(snapshot)).toEqual([]);
    for (const assignment of endpoints) for (const locality of assignment['endpoints'] as { locality?: unknown }[]) expect(locality.locality).toBeDefined();
    expectGolden(TESTDATA, name, { listeners, routes, clusters, endpoints });
  });
});
