import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { stringify } from 'yaml';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, loadEnvoyProtos, ROUTE_TYPE, type EnvoyProtos, type GenerateRequest } from '../../index.js';
import { listCases, loadCase, valuesOf } from '../testing/test-cases.js';
import { buildPushContext, newGrpcGenerators } from '../index.js';

const TESTDATA = fileURLToPath(new URL('./testdata/', import.meta.url));
const refreshGolden = process.env['REFRESH_GOLDEN'] === '1';
const FULL: GenerateRequest = { names: [], full: true, configsUpdated: [] };

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});


describe('proxyless gRPC generators (golden)', () => {
  test.each(listCases(TESTDATA))('%s', (name) => {
    const { model, proxy, routeNames: listenerNames } = loadCase(TESTDATA, `${name}.in.yaml`);
    const push = buildPushContext(model);
    const [lds, rds, cds, eds] = newGrpcGenerators();
    const of = (generator: typeof lds, typeUrl: string, names: string[]): Record<string, unknown>[] =>
      (generator?.generate(proxy, push, { ...FULL, names })?.resources ?? []).map((named) => {
        const message = (typeof named.resource === 'function' ? named.resource() : named.resource) as Record<string, unknown>;
        protos.encodeAny(typeUrl, message);
        return message;
      });
    const listeners = of(lds, LISTENER_TYPE, listenerNames);
    expect(listeners.map((listener) => listener['name'])).toEqual(listenerNames);
    const routeNames = [...valuesOf(listeners, 'route_config_name')];
    const routes = of(rds, ROUTE_TYPE, routeNames);
    expect(routes.map((route) => route['name']).sort()).toEqual(routeNames.sort());
    const clusterNames = [...valuesOf(routes, 'cluster')];
    const clusters = of(cds, CLUSTER_TYPE, clusterNames);
    expect(clusters.map((cluster) => cluster['name']).sort()).toEqual(clusterNames.sort());
    const endpoints = of(eds, ENDPOINT_TYPE, clusterNames);
    for (const assignment of endpoints) for (const locality of assignment['endpoints'] as { locality?: unknown }[]) expect(locality.locality).toBeDefined();
    const actual = stringify({ listeners, routes, clusters, endpoints }, { lineWidth: 0, aliasDuplicateObjects: false });
    const golden = join(TESTDATA, `${name}.golden.yaml`);
    if (refreshGolden) writeFileSync(golden, actual);
    else expect(actual).toBe(readFileSync(golden, 'utf8'));
  });
});
