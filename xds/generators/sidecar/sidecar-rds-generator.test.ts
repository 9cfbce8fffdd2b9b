import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { expectGolden, goldenCases } from '../../../testing/golden.js';
import { consistent } from '../../testing/consistent.js';
import { ROUTE_TYPE, jsonToStruct, loadEnvoyProtos, parseProxy, type EnvoyProtos, type GenerateRequest, type Proxy } from '../../index.js';
import { generateSnapshot, loadCase, required, type GeneratorCase } from '../testing/test-cases.js';
import { buildRetryPolicy, newSidecarCdsGenerator, newSidecarEdsGenerator, newSidecarLdsGenerator, newSidecarRdsGenerator } from '../index.js';
import { buildPushContext, type PushContext } from '../../model/index.js';
import { PushMemoMap } from '../../encoding/index.js';
import { generateRequest } from '../../testing/generate-request.js';

const TESTDATA = fileURLToPath(new URL('./testdata/rds/', import.meta.url));

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

function full(names: readonly string[]): GenerateRequest {
  return generateRequest({ names, full: true, configsUpdated: [] });
}

function routeConfigs(proxy: Proxy, push: PushContext, names: readonly string[]): Record<string, unknown>[] {
  const result = newSidecarRdsGenerator().generate(proxy, push, full(names));
  expect(result).toBeDefined();
  return (result?.resources ?? []).map((named) => {
    const resource = (typeof named.resource === 'function' ? named.resource() : named.resource) as Record<string, unknown>;
    expect(resource['name']).toBe(named.name);
    return resource;
  });
}

type VirtualHost = { name: string; domains: string[]; routes: Record<string, unknown>[] };

function clustersOf(config: Record<string, unknown>): string[] {
  const names: string[] = [];
  for (const host of config['virtual_hosts'] as VirtualHost[]) {
    for (const route of host.routes) {
      const action = route['route'] as { cluster?: string; weighted_clusters?: { clusters: { name: string }[] } } | undefined;
      if (action?.cluster !== undefined) names.push(action.cluster);
      for (const weighted of action?.weighted_clusters?.clusters ?? []) names.push(weighted.name);
    }
  }
  return names;
}

const cases = goldenCases(TESTDATA);

describe('sidecar RDS golden files', () => {
  test('there are at least 4 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(4);
  });

  test.each(cases)('%s', (name) => {
    const { model, proxy, routeNames } = loadCase(TESTDATA, `${name}.in.yaml`);
    const push = buildPushContext(model);
    const configs = routeConfigs(proxy, push, routeNames);
    expect(configs.map((config) => config['name'])).toEqual([...routeNames].sort());

    // Every resource is a valid Envoy message (unknown fields fail).
    for (const config of configs) protos.encodeAny(ROUTE_TYPE, config);

    // Consistency: every cluster a requested route sends to is one CDS gives the proxy, and the
    // proxy's whole snapshot hangs together.
    const generators = { lds: newSidecarLdsGenerator(), rds: newSidecarRdsGenerator(), cds: newSidecarCdsGenerator(), eds: newSidecarEdsGenerator() };
    const snapshot = generateSnapshot(proxy, push, generators, protos);
    expect(consistent(snapshot)).toEqual([]);
    expect(consistent({ routes: configs, clusters: snapshot.clusters })).toEqual([]);

    expectGolden(TESTDATA, name, { routes: configs });
  });
});

describe('sidecar RDS generator', () => {
  function load(name: string): GeneratorCase & { push: PushContext } {
    const loaded = loadCase(TESTDATA, `${name}.in.yaml`);
    return { ...loaded, push: buildPushContext(loaded.model) };
  }

  test('a domain another virtual host already serves is left out and reported as a push finding', () => {
    const { proxy, push } = load('duplicate-domains');
    const found: string[] = [];
    const findings = { add: (condition: string, key: string) => found.push(`${condition} ${key}`) };
    const result = newSidecarRdsGenerator().generate(proxy, push, { ...full(['8080']), findings });
    const named = result?.resources[0];
    const config = (typeof named?.resource === 'function' ? named.resource() : named?.resource) as { virtual_hosts: VirtualHost[] };
    expect(config.virtual_hosts.map((host) => [host.name, host.domains])).toEqual([
      ['cart.shop.example:8080', ['cart.shop.example', 'cart.shop.example:8080', '192.0.2.40', '192.0.2.40:8080']],
      ['catalog.shop.example:8080', ['catalog.shop.example', 'catalog.shop.example:8080']],
    ]);
    expect(found).toEqual(['duplicate-domain catalog.shop.example:8080']);
  });

  test('ignores endpoint-only pushes and answers nothing for a request naming nothing', () => {
    const { proxy, push } = load('default-routes');
    const rds = newSidecarRdsGenerator();
    expect(rds.generate(proxy, push, generateRequest({ names: ['8000'], full: false, configsUpdated: [] }))).toBeUndefined();
    expect(rds.generate(proxy, push, full([]))?.resources).toEqual([]);
  });

  test('a name that is no port, or a port no service has, gets an empty route configuration', () => {
    const { proxy, push } = load('default-routes');
    const configs = routeConfigs(proxy, push, ['http.8080', '7777', '8000']);
    expect(configs.map((config) => [config['name'], (config['virtual_hosts'] as unknown[]).length])).toEqual([
      ['7777', 0],
      ['8000', 3],
      ['http.8080', 0],
    ]);
    for (const config of configs) protos.encodeAny(ROUTE_TYPE, config);
  });

  test('MESH_DEFAULT_REQUEST_TIMEOUT: VirtualService routes without a timeout take it (gRPC header max too); routes with one, and hosts without a VirtualService, keep theirs', () => {
    const rds = newSidecarRdsGenerator({ defaultRequestTimeoutMs: 1500 });
    const timeoutsOf = (name: string, routeName: string): unknown[][] => {
      const { proxy, push } = load(name);
      const config = (rds.generate(proxy, push, full([routeName]))?.resources[0]?.resource as () => Record<string, unknown>)();
      protos.encodeAny(ROUTE_TYPE, config);
      return (config['virtual_hosts'] as VirtualHost[])
        .flatMap((host) => host.routes)
        .map((route) => route['route'] as Record<string, unknown>)
        .map((action) => [action['timeout'], action['max_grpc_timeout']]);
    };
    const defaulted = { seconds: 1, nanos: 500_000_000 };
    expect(timeoutsOf('rewrite-timeout-retries', '80')).toEqual([
      [{ seconds: 5 }, { seconds: 5 }],
      [
        { seconds: 0, nanos: 250_000_000 },
        { seconds: 0, nanos: 250_000_000 },
      ],
      [defaulted, defaulted],
    ]);
    expect(new Set(timeoutsOf('default-routes', '8000').map(([timeout]) => JSON.stringify(timeout)))).toEqual(new Set(['{"seconds":0}']));
  });

  test('the second port of a service has its own virtual host and cluster', () => {
    const { proxy, push } = load('default-routes');
    const [config] = routeConfigs(proxy, push, ['9000']);
    const hosts = (config?.['virtual_hosts'] ?? []) as VirtualHost[];
    expect(hosts.map((host) => host.name)).toEqual(['reviews.foo.svc.cluster.local:9000']);
    expect(hosts[0]?.domains).toContain('reviews:9000');
    expect(clustersOf(config ?? {})).toEqual(['outbound|9000||reviews.foo.svc.cluster.local']);
  });

  test('a proxy in another namespace gets no short name', () => {
    const { model } = loadCase(TESTDATA, 'default-routes.in.yaml');
    const proxy = parseProxy({ id: 'sidecar~10.0.0.7~x-1.bar~bar.svc.cluster.local', metadata: jsonToStruct({ NAMESPACE: 'bar' }) });
    const [config] = routeConfigs(proxy, buildPushContext(model), ['8000']);
    const hosts = (config?.['virtual_hosts'] ?? []) as VirtualHost[];
    expect(hosts.find((host) => host.name.startsWith('reviews.'))?.domains).not.toContain('reviews');
    expect(hosts.find((host) => host.name.startsWith('details.'))?.domains.slice(0, 4)).toEqual([
      'details.bar.svc.cluster.local',
      'details.bar.svc.cluster.local:8000',
      'details',
      'details:8000',
    ]);
  });

  test('proxies of a push share the virtual host objects of services they see alike (their encoding is shared)', () => {
    const { model } = loadCase(TESTDATA, 'default-routes.in.yaml');
    const push = buildPushContext(model);
    const generator = newSidecarRdsGenerator();
    // The memo the encoding layer hands the generators of one push.
    const ofPush: GenerateRequest = { ...full(['8000']), memo: new PushMemoMap() };
    const hostsOf = (namespace: string): VirtualHost[] => {
      const proxy = parseProxy({ id: `sidecar~10.0.0.7~x-1.${namespace}~${namespace}.svc.cluster.local`, metadata: jsonToStruct({ NAMESPACE: namespace }) });
      const named = generator.generate(proxy, push, ofPush)?.resources[0];
      const config = (typeof named?.resource === 'function' ? named.resource() : named?.resource) as { virtual_hosts: VirtualHost[] };
      return config.virtual_hosts;
    };
    const [baz, qux, bar] = [hostsOf('baz'), hostsOf('qux'), hostsOf('bar')];
    expect(baz.length).toBeGreaterThan(1);
    baz.forEach((host, index) => expect(qux[index]).toBe(host));
    const details = (hosts: VirtualHost[]): VirtualHost | undefined => hosts.find((host) => host.name.startsWith('details.'));
    // In its own namespace a service's host has its short name: an object of its own.
    expect(details(bar)).not.toBe(details(baz));
    expect(details(bar)?.domains).toContain('details');
    expect(details(baz)?.domains).not.toContain('details');
    baz.filter((host) => host !== details(baz)).forEach((host) => expect(bar).toContain(host));
  });

  test('a VirtualService exported only to its own namespace does not route other namespaces', () => {
    const { model } = loadCase(TESTDATA, 'weighted-subsets.in.yaml');
    const entry = required(model.configStore.list('VirtualService')[0], 'a VirtualService');
    model.configStore.apply({ ...entry.resource, spec: { ...entry.resource.spec, exportTo: ['.'] } });
    const inside = parseProxy({ id: 'sidecar~10.0.0.9~a-1.bookinfo~bookinfo.svc.cluster.local', metadata: jsonToStruct({ NAMESPACE: 'bookinfo' }) });
    const outside = parseProxy({ id: 'sidecar~10.0.0.8~b-1.other~other.svc.cluster.local', metadata: jsonToStruct({ NAMESPACE: 'other' }) });
    const push = buildPushContext(model);
    const routeNamesOf = (proxy: Proxy): unknown[] =>
      ((routeConfigs(proxy, push, ['9080'])[0]?.['virtual_hosts'] ?? []) as VirtualHost[]).flatMap((host) => host.routes.map((route) => route['name']));
    expect(routeNamesOf(inside)).toEqual(['api.v2-api', 'ratings', 'rest']);
    expect(routeNamesOf(outside)).toEqual(['default']);
  });

  test('the push context holds VirtualServices and Gateways, hosts resolved, sorted by namespace and name', () => {
    const { model } = loadCase(TESTDATA, 'header-redirect.in.yaml');
    const push = buildPushContext(model);
    expect(Object.isFrozen(push.virtualServices)).toBe(true);
    expect(push.virtualServices.map((entry) => [entry.name, entry.hosts])).toEqual([
      ['api-ingress', ['api.web.svc.cluster.local']],
      ['web', ['web.web.svc.cluster.local']],
    ]);
    expect(push.gateways).toEqual([]);
  });

  test.each([
    [
      'no retries given: the default policy',
      undefined,
      { retry_on: 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes', num_retries: { value: 2 } },
    ],
    ['zero attempts: none', { attempts: 0 }, undefined],
    ['conditions only: no status codes', { attempts: 4, retryOn: 'reset, connect-failure' }, { retry_on: 'reset,connect-failure', num_retries: { value: 4 } }],
    ['codes only', { attempts: 1, retryOn: '502,504' }, { retry_on: 'retriable-status-codes', retriable_status_codes: [502, 504] }],
  ] as const)('retries: %s', (_label, retries, expected) => {
    const policy = buildRetryPolicy(retries === undefined ? undefined : { ...retries });
    if (expected === undefined) expect(policy).toBeUndefined();
    else expect(policy).toMatchObject(expected);
    if (expected !== undefined && !('retriable_status_codes' in expected) && retries !== undefined) expect(policy).not.toHaveProperty('retriable_status_codes');
  });
});
