import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it, test } from '@jest/globals';
import { expectGolden, goldenCases } from '../../../testing/golden.js';
import { consistent } from '../../testing/consistent.js';
import { compileRouteConfiguration, selectFilterChain, type FilterChainLike, type RouteConfigurationConfig } from '../../../dataplane/decisions/index.js';
import { simulateProxyConfig } from '../../../dataplane/testing/simulation-support.js';
import { newMeshGenerators } from '../../mesh-generators.js';
import {
  jsonToStruct,
  LISTENER_TYPE,
  loadEnvoyProtos,
  parseProxy,
  ROUTE_TYPE,
  type EnvoyProtos,
  type GenerateRequest,
  type JsonValue,
  type Proxy,
} from '../../index.js';
import { caseGeneratorOptions, generateSnapshot, loadCase, valuesOf } from '../testing/test-cases.js';
import {
  buildSidecarClusters,
  mergeGateways,
  newGatewayCdsGenerator,
  newGatewayLdsGenerator,
  newGatewayRdsGenerator,
  newSidecarEdsGenerator,
  resolveGatewayName,
} from '../index.js';
import { buildPushContext, type PushContext, type SecurityFilters } from '../../model/index.js';
import { generateRequest } from '../../testing/generate-request.js';

const TESTDATA = fileURLToPath(new URL('./testdata/snapshot/', import.meta.url));
const MERGING = fileURLToPath(new URL('./testdata/merging/', import.meta.url));
const FULL: GenerateRequest = generateRequest({ names: [], full: true, configsUpdated: [] });
const RBAC_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';
const NETWORK_RBAC_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC';
/** Recognisable policy filters: the port and kind they were asked for are in their stat prefix. */
const MARKER: SecurityFilters = {
  http: (input) => [
    {
      name: 'envoy.filters.http.rbac',
      typed_config: { '@type': RBAC_TYPE, shadow_rules_stat_prefix: `gateway-port-${input.port}-${input.kind}-${input.labels['mesh'] ?? ''}` },
    },
  ],
  tcp: (input) => [
    { name: 'envoy.filters.network.rbac', typed_config: { '@type': NETWORK_RBAC_TYPE, stat_prefix: `gateway-tcp-${input.port}-${input.kind}` } },
  ],
};

type Message = Record<string, unknown>;

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

function resources(result: { resources: readonly { resource: object | (() => object) }[] } | undefined): Message[] {
  return (result?.resources ?? []).map((named) => (typeof named.resource === 'function' ? named.resource() : named.resource) as Message);
}

function objectsUnder(value: unknown, key: string, out: Message[] = []): Message[] {
  if (Array.isArray(value)) for (const item of value) objectsUnder(item, key, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === key && v !== null && typeof v === 'object') out.push(v as Message);
      objectsUnder(v, key, out);
    }
  }
  return out;
}

interface Generated {
  push: PushContext;
  proxy: Proxy;
  listeners: Message[];
  routes: Message[];
  clusters: Message[];
  endpoints: Message[];
}

function generateCase(file: string): Generated {
  const loaded = loadCase(TESTDATA, file);
  const { model, proxy } = loaded;
  const push = buildPushContext(model);
  const generators = {
    lds: newGatewayLdsGenerator({ ...caseGeneratorOptions(loaded), securityFilters: MARKER }),
    rds: newGatewayRdsGenerator(),
    cds: newGatewayCdsGenerator(),
    eds: newSidecarEdsGenerator(),
  };
  return { push, proxy, ...generateSnapshot(proxy, push, generators, protos) };
}

function chainsOf(listener: Message): (FilterChainLike & { name?: string; filters: { name: string; typed_config: Message }[] })[] {
  return listener['filter_chains'] as (FilterChainLike & { name?: string; filters: { name: string; typed_config: Message }[] })[];
}

function routeOf(routes: readonly Message[], name: string): (host: string, path: string) => string {
  const config = routes.find((route) => route['name'] === name);
  if (!config) throw new Error(`no route configuration ${name}`);
  const decide = compileRouteConfiguration(protos.decodeAny(protos.encodeAny(ROUTE_TYPE, config)) as RouteConfigurationConfig);
  return (host, path) => {
    const decision = decide({ method: 'GET', host, path, headers: {} }, { random: 0, scheme: 'http' });
    return decision.kind === 'cluster' ? decision.cluster : decision.kind === 'no-route' ? `${decision.status}` : decision.kind;
  };
}

function routerProxy(metadata: Record<string, JsonValue>): Proxy {
  return parseProxy({ id: 'router~10.0.0.9~ingress-abc.mesh-system~mesh-system.svc.cluster.local', metadata: jsonToStruct(metadata) });
}

describe('gateway clusters of ServiceEntry hosts', () => {
  test('a NONE entry is EDS on a gateway (ORIGINAL_DST on a sidecar); a DNS entry STRICT_DNS on both', () => {
    const { clusters, push } = generateCase('service-entries.in.yaml');
    const typeOf = (list: readonly Message[], name: string) => list.find((cluster) => cluster['name'] === name)?.['type'];
    expect(typeOf(clusters, 'outbound|80||legacy.internal.example')).toBe('EDS');
    expect(typeOf(clusters, 'outbound|80||search.example.com')).toBe('STRICT_DNS');
    const sidecar = parseProxy({ id: 'sidecar~10.0.1.1~sleep-1.foo~foo.svc.cluster.local', metadata: jsonToStruct({ NAMESPACE: 'foo' }) });
    const sidecarClusters = buildSidecarClusters(sidecar, push) as Message[];
    expect(typeOf(sidecarClusters, 'outbound|80||legacy.internal.example')).toBe('ORIGINAL_DST');
    expect(typeOf(sidecarClusters, 'outbound|80||search.example.com')).toBe('STRICT_DNS');
  });
});

describe('gateway LDS, RDS, CDS and EDS golden files', () => {
  test.each(goldenCases(TESTDATA))('%s', (name) => {
    const { listeners, routes, clusters, endpoints } = generateCase(`${name}.in.yaml`);
    // Every resource passed the strict encoder (unknown fields throw); the snapshot hangs together.
    expect(consistent({ listeners, routes, clusters, endpoints })).toEqual([]);
    // The policy filters are in every chain: before the router in each HCM, before tcp_proxy elsewhere.
    for (const listener of listeners) {
      for (const chain of chainsOf(listener)) {
        const [first, second] = chain.filters;
        if (first?.name === 'envoy.filters.network.http_connection_manager') {
          const httpFilters = (first.typed_config['http_filters'] as { name: string; typed_config: Message }[]) ?? [];
          expect(httpFilters.map((filter) => filter.name)).toEqual([
            'envoy.filters.http.rbac',
            'mesh.metadata_exchange',
            'mesh.stats',
            'envoy.filters.http.router',
          ]);
          expect(String(httpFilters[0]?.typed_config['shadow_rules_stat_prefix'])).toMatch(/^gateway-port-\d+-gateway-ingressgateway$/);
        } else {
          expect([first?.name, second?.name]).toEqual(['envoy.filters.network.rbac', 'envoy.filters.network.tcp_proxy']);
        }
      }
    }
    expectGolden(TESTDATA, name, { listeners, routes, clusters: clusters.map((cluster) => cluster['name']) });
  });
});

describe('gateway selection and merging', () => {
  it('gives no listener when no Gateway selects the proxy', () => {
    const { listeners, routes } = generateCase('not-selected.in.yaml');
    expect(listeners).toEqual([]);
    expect(routes).toEqual([]);
  });

  it('merges HTTP servers of several Gateways on one port and leaves out servers that cannot share it', () => {
    const { model, proxy } = loadCase(MERGING, 'conflicts.in.yaml');
    const merged = mergeGateways(buildPushContext(model), proxy);
    expect(merged.listeners.map((listener) => [listener.name, listener.servers.map((entry) => `${entry.gateway.name}#${entry.index}:${entry.kind}`)])).toEqual([
      ['0.0.0.0_8080', ['a#0:http', 'b#1:http']],
      ['0.0.0.0_8443', ['a#1:https', 'b#4:https']],
      ['0.0.0.0_9000', ['own#0:http']],
    ]);
    expect(merged.serversByRouteName.get('http.8080')?.map((entry) => entry.gateway.name)).toEqual(['a', 'b']);
    expect([...merged.serversByRouteName.keys()].sort()).toEqual(['http.8080', 'http.9000', 'https.8443.https-y.b.foo', 'https.8443.https.a.foo']);
    expect(merged.rejected.map((rejected) => [`${rejected.gateway.name}#${rejected.index}`, rejected.reason])).toEqual([
      ['b#0', 'port 8080 already serves HTTP'],
      ['b#2', 'port 8443 already serves TLS hosts x.example.com'],
      ['b#3', 'port 8443 already serves TLS'],
    ]);
  });

  it('takes only the Gateways of the proxy namespace with PILOT_SCOPE_GATEWAY_TO_NAMESPACE', () => {
    const { model, proxy } = loadCase(MERGING, 'conflicts.in.yaml');
    const merged = mergeGateways(buildPushContext(model), proxy, { scopeToNamespace: true });
    expect(merged.listeners.map((listener) => listener.name)).toEqual(['0.0.0.0_9000']);
  });

  it('binds the target port of the gateway Service, and names routes by the server port when told to', () => {
    const { model, proxy } = loadCase(TESTDATA, 'match-gateways.in.yaml');
    const push = buildPushContext(model);
    expect(mergeGateways(push, proxy).listeners.map((listener) => [listener.name, listener.servers[0]?.routeName])).toEqual([
      ['0.0.0.0_8080', 'http.8080'],
      ['0.0.0.0_9090', 'http.9090'],
    ]);
    expect(mergeGateways(push, proxy, { useTargetPortForRoutes: false }).listeners.map((listener) => listener.servers[0]?.routeName)).toEqual([
      'http.80',
      'http.9090',
    ]);
  });

  it.each([
    ['gw', 'foo', 'foo/gw'],
    ['./gw', 'foo', 'foo/gw'],
    ['bar/gw', 'foo', 'bar/gw'],
    ['gw.bar', 'foo', 'bar/gw'],
    ['gw.bar.svc.cluster.local', 'foo', 'bar/gw'],
    ['mesh', 'foo', 'mesh'],
  ])('resolves the gateway name %s in namespace %s to %s', (name, namespace, expected) => {
    expect(resolveGatewayName(name, namespace)).toBe(expected);
  });
});

describe('gateway routing decisions over the generated config', () => {
  it('routes by host through wildcard and namespace-scoped server hosts, 404 otherwise', () => {
    const { routes } = generateCase('host-wildcard.in.yaml');
    const route = routeOf(routes, 'http.8080');
    expect(route('httpbin.example.com', '/ip')).toBe('outbound|8000||httpbin.foo.svc.cluster.local');
    expect(route('reviews.example.com', '/reviews/1')).toBe('outbound|9080||reviews.bar.svc.cluster.local');
    expect(route('reviews.example.com', '/ip')).toBe('404');
    expect(route('api.internal', '/reviews')).toBe('outbound|9080||reviews.bar.svc.cluster.local');
    expect(route('api.internal', '/ip')).toBe('404');
    expect(route('httpbin.example.org', '/ip')).toBe('404');
  });

  it('applies matches naming a Gateway only on that Gateway', () => {
    const { routes } = generateCase('match-gateways.in.yaml');
    const a = routeOf(routes, 'http.8080');
    const b = routeOf(routes, 'http.9090');
    expect(a('a.example.com', '/a')).toBe('outbound|8000|v1|httpbin.foo.svc.cluster.local');
    expect(b('b.example.com', '/a')).toBe('outbound|8000||httpbin.foo.svc.cluster.local');
    expect(a('a.example.com', '/b')).toBe('outbound|8000||httpbin.foo.svc.cluster.local');
    expect(b('b.example.com', '/b')).toBe('outbound|8000||httpbin.foo.svc.cluster.local');
    expect(a('b.example.com', '/')).toBe('404');
  });

  it('picks filter chains by SNI: passthrough, TLS termination, or no chain at all', () => {
    const { listeners } = generateCase('tcp-and-tls.in.yaml');
    const listener = listeners.find((candidate) => candidate['name'] === '0.0.0.0_443');
    if (!listener) throw new Error('no 0.0.0.0_443 listener');
    const chains = chainsOf(protos.decodeAny(protos.encodeAny(LISTENER_TYPE, listener)));
    const pick = (serverName: string): string | undefined =>
      selectFilterChain(chains, { destinationAddress: '10.0.0.9', destinationPort: 443, sourceAddress: '10.1.1.1', transportProtocol: 'tls', serverName })
        ?.name;
    expect(pick('secure.data.example.com')).toBe('passthrough.443.secure.data.example.com');
    expect(pick('db.example.com')).toBe('tls.443.tls-db.edge.data');
    expect(pick('unknown.example.com')).toBeUndefined();
  });

  it('answers an HTTP gateway in the embedded data plane without a NACK', () => {
    const { model, proxy } = loadCase(TESTDATA, 'host-wildcard.in.yaml');
    const snapshot = simulateProxyConfig(protos, newMeshGenerators(), proxy, buildPushContext(model));
    expect(JSON.stringify(snapshot)).toContain('http.8080');
  });
});

describe('gateway generators', () => {
  it('generates only the requested routes, an empty configuration for a route no server has, nothing for no names', () => {
    const { model, proxy } = loadCase(TESTDATA, 'tcp-and-tls.in.yaml');
    const push = buildPushContext(model);
    const rds = newGatewayRdsGenerator();
    const only = resources(rds.generate(proxy, push, { ...FULL, names: ['http.8080'] }));
    expect(only.map((route) => route['name'])).toEqual(['http.8080']);
    const gone = resources(rds.generate(proxy, push, { ...FULL, names: ['https.9443.https.gone.foo'] }));
    expect(gone).toEqual([{ name: 'https.9443.https.gone.foo', virtual_hosts: [], validate_clusters: { value: false } }]);
    protos.encodeAny(ROUTE_TYPE, gone[0] ?? {});
    expect(rds.generate(proxy, push, FULL)?.resources).toEqual([]);
    expect(rds.generate(proxy, push, { ...FULL, full: false })).toBeUndefined();
  });

  it('sends a gateway outbound clusters and BlackHoleCluster only; with PILOT_FILTER_GATEWAY_CLUSTER_CONFIG just the routed hosts', () => {
    const { model, proxy } = loadCase(TESTDATA, 'match-gateways.in.yaml');
    const push = buildPushContext(model);
    const names = (options: { filterGatewayClusters?: boolean }): string[] =>
      resources(newGatewayCdsGenerator(options).generate(proxy, push, FULL)).map((cluster) => cluster['name'] as string);
    expect(names({})).toEqual([
      'BlackHoleCluster',
      'outbound|8000|v1|httpbin.foo.svc.cluster.local',
      'outbound|8000||httpbin.foo.svc.cluster.local',
      'outbound|80||ingress.mesh-system.svc.cluster.local',
    ]);
    expect(names({ filterGatewayClusters: true })).toEqual([
      'BlackHoleCluster',
      'outbound|8000|v1|httpbin.foo.svc.cluster.local',
      'outbound|8000||httpbin.foo.svc.cluster.local',
    ]);
  });

  it('serves a router proxy the endpoints of its clusters', () => {
    const { push, proxy } = generateCase('http-gateway.in.yaml');
    const [assignment] = resources(newSidecarEdsGenerator().generate(proxy, push, { ...FULL, names: ['outbound|8000||httpbin.foo.svc.cluster.local'] }));
    expect(valuesOf(assignment, 'address')).toEqual(new Set(['10.0.1.10']));
  });

  it('takes XFCC handling and trusted hops from the gateway topology, and strips host ports when told to', () => {
    const { model } = loadCase(TESTDATA, 'http-gateway.in.yaml');
    const push = buildPushContext(model);
    const hcmOf = (proxy: Proxy, options = {}): Message => {
      const [listener] = resources(newGatewayLdsGenerator(options).generate(proxy, push, FULL));
      protos.encodeAny(LISTENER_TYPE, listener ?? {});
      return objectsUnder(listener, 'typed_config').find((config) => 'rds' in config) ?? {};
    };
    const plain = hcmOf(routerProxy({ NAMESPACE: 'mesh-system' }));
    expect(plain).toMatchObject({
      use_remote_address: { value: true },
      forward_client_cert_details: 'SANITIZE_SET',
      internal_address_config: {},
      set_current_client_cert_details: { subject: { value: true }, cert: true, dns: true, uri: true },
    });
    expect(plain).not.toHaveProperty('xff_num_trusted_hops');
    expect(plain).not.toHaveProperty('strip_any_host_port');
    const behindBalancer = hcmOf(
      routerProxy({ NAMESPACE: 'mesh-system', PROXY_CONFIG: { gatewayTopology: { numTrustedProxies: 2, forwardClientCertDetails: 'FORWARD_ONLY' } } }),
      { stripHostPort: true },
    );
    expect(behindBalancer).toMatchObject({ xff_num_trusted_hops: 2, forward_client_cert_details: 'FORWARD_ONLY', strip_any_host_port: true });
    expect(behindBalancer).not.toHaveProperty('set_current_client_cert_details');
  });

  it('shares encoded listeners and routes between gateway proxies with the same servers, namespace and labels', () => {
    const { model } = loadCase(TESTDATA, 'http-gateway.in.yaml');
    const push = buildPushContext(model);
    const keys = (proxy: Proxy): (string | undefined)[] => [
      ...(newGatewayLdsGenerator().generate(proxy, push, FULL)?.resources ?? []).map((named) => named.cacheKey),
      ...(newGatewayRdsGenerator().generate(proxy, push, { ...FULL, names: ['http.8080'] })?.resources ?? []).map((named) => named.cacheKey),
    ];
    const first = parseProxy({
      id: 'router~10.0.0.21~ingress-one.mesh-system~mesh-system.svc.cluster.local',
      metadata: jsonToStruct({ LABELS: { mesh: 'ingressgateway' } }),
    });
    const second = parseProxy({
      id: 'router~10.0.0.22~ingress-two.mesh-system~mesh-system.svc.cluster.local',
      metadata: jsonToStruct({ LABELS: { mesh: 'ingressgateway' } }),
    });
    const other = parseProxy({
      id: 'router~10.0.0.23~ingress-three.mesh-system~mesh-system.svc.cluster.local',
      metadata: jsonToStruct({ LABELS: { mesh: 'ingressgateway', tier: 'edge' } }),
    });
    expect(keys(first)).toHaveLength(2);
    expect(keys(second)).toEqual(keys(first));
    expect(keys(other)).not.toEqual(keys(first));
  });
});
