import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { stringify } from 'yaml';
import { CLUSTER_TYPE, LISTENER_TYPE, loadEnvoyProtos, ROUTE_TYPE, type EnvoyProtos, type GenerateRequest } from '../index.js';
import { listCases, loadCase } from './test-cases.js';
import { buildPushContext, newGatewayLdsGenerator, newGatewayRdsGenerator, newSidecarCdsGenerator, type SecurityFilters } from './index.js';

const TESTDATA = fileURLToPath(new URL('./testdata/gateway/', import.meta.url));
const refreshGolden = process.env['REFRESH_GOLDEN'] === '1';
const FULL: GenerateRequest = { names: [], full: true, configsUpdated: [] };
const MARKER: SecurityFilters = {
  http: (input) => [{ name: 'envoy.filters.http.rbac', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC', shadow_rules_stat_prefix: `gateway-port-${input.port}-${input.kind}` } }],
  tcp: () => [],
};

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

function resources(result: { resources: readonly { resource: object | (() => object) }[] } | undefined): Record<string, unknown>[] {
  return (result?.resources ?? []).map((named) => (typeof named.resource === 'function' ? named.resource() : named.resource) as Record<string, unknown>);
}

function valuesOf(value: unknown, key: string, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) valuesOf(item, key, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === key && typeof v === 'string') out.add(v);
      else valuesOf(v, key, out);
    }
  }
  return out;
}

describe('gateway LDS and RDS golden files', () => {
  test.each(listCases(TESTDATA))('%s', (name) => {
    const { model, proxy } = loadCase(TESTDATA, `${name}.in.yaml`);
    const push = buildPushContext(model);
    const listeners = resources(newGatewayLdsGenerator({ securityFilters: MARKER }).generate(proxy, push, FULL));
    const routeNames = [...valuesOf(listeners, 'route_config_name')];
    const routes = resources(newGatewayRdsGenerator().generate(proxy, push, { ...FULL, names: routeNames }));
    for (const listener of listeners) protos.encodeAny(LISTENER_TYPE, listener);
    for (const route of routes) protos.encodeAny(ROUTE_TYPE, route);
    // Consistency: every RDS name is served, every routed cluster exists.
    expect(routes.map((route) => route['name']).sort()).toEqual(routeNames.sort());
    const clusters = new Set(resources(newSidecarCdsGenerator().generate(proxy, push, FULL)).map((cluster) => cluster['name'] as string));
    for (const cluster of valuesOf(routes, 'cluster')) expect(clusters).toContain(cluster);
    // The policy filters are in every HTTP connection manager, before the router.
    for (const listener of listeners) {
      for (const chain of listener['filter_chains'] as { filters: { typed_config: { http_filters: { name: string }[] } }[] }[]) {
        expect(chain.filters[0]?.typed_config.http_filters.map((filter) => filter.name)).toEqual(['envoy.filters.http.rbac', 'envoy.filters.http.router']);
      }
    }
    const actual = stringify({ listeners, routes }, { lineWidth: 0, aliasDuplicateObjects: false });
    const golden = join(TESTDATA, `${name}.golden.yaml`);
    if (refreshGolden) writeFileSync(golden, actual);
    else expect(actual).toBe(readFileSync(golden, 'utf8'));
  });

  test('a gateway that does not select the proxy gives no listener', () => {
    const { model, proxy } = loadCase(TESTDATA, 'not-selected.in.yaml');
    expect(resources(newGatewayLdsGenerator().generate(proxy, buildPushContext(model), FULL))).toEqual([]);
  });
});
