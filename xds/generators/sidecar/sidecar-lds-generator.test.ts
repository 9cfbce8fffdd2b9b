import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { stringify } from 'yaml';
import { LISTENER_TYPE, loadEnvoyProtos, type EnvoyProtos, type GenerateRequest } from '../../index.js';
import { listCases, loadCase, valuesOf } from '../testing/test-cases.js';
import { buildPushContext, newSidecarCdsGenerator, newSidecarLdsGenerator, newSidecarRdsGenerator } from '../index.js';

const TESTDATA = fileURLToPath(new URL('./testdata/lds/', import.meta.url));
const refreshGolden = process.env['REFRESH_GOLDEN'] === '1';
const FULL: GenerateRequest = { names: [], full: true, configsUpdated: [] };

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

function resources(result: { resources: readonly { resource: object | (() => object) }[] } | undefined): Record<string, unknown>[] {
  return (result?.resources ?? []).map((named) => (typeof named.resource === 'function' ? named.resource() : named.resource) as Record<string, unknown>);
}


describe('sidecar LDS golden files', () => {
  const cases = listCases(TESTDATA);
  test('there are cases for each mode', () => {
    expect(cases.length).toBeGreaterThanOrEqual(6);
  });

  test.each(cases)('%s', (name) => {
    const { model, proxy } = loadCase(TESTDATA, `${name}.in.yaml`);
    const push = buildPushContext(model);
    const listeners = resources(newSidecarLdsGenerator().generate(proxy, push, FULL));
    for (const listener of listeners) protos.encodeAny(LISTENER_TYPE, listener);

    // Consistency: every cluster a listener names exists; every RDS name is generated.
    const clusters = new Set(resources(newSidecarCdsGenerator().generate(proxy, push, FULL)).map((cluster) => cluster['name'] as string));
    for (const cluster of valuesOf(listeners, 'cluster')) expect(clusters).toContain(cluster);
    const routeNames = [...valuesOf(listeners, 'route_config_name')];
    const routes = resources(newSidecarRdsGenerator().generate(proxy, push, { ...FULL, names: routeNames }));
    expect(routes.map((route) => route['name']).sort()).toEqual([...routeNames].sort());

    const actual = stringify(listeners, { lineWidth: 0, aliasDuplicateObjects: false });
    const golden = join(TESTDATA, `${name}.golden.yaml`);
    if (refreshGolden) writeFileSync(golden, actual);
    else expect(actual).toBe(readFileSync(golden, 'utf8'));
  });

  test('listeners do not depend on anything but the push for the outbound side: cached, inbound not', () => {
    const { model, proxy } = loadCase(TESTDATA, 'no-policy.in.yaml');
    const result = newSidecarLdsGenerator().generate(proxy, buildPushContext(model), FULL);
    expect(result?.resources.filter((r) => r.cacheKey === undefined).map((r) => r.name)).toEqual(['virtualInbound']);
    expect(newSidecarLdsGenerator().generate(proxy, buildPushContext(model), { ...FULL, full: false })).toBeUndefined();
  });
});
