import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { expectGolden, goldenCases } from '../../../testing/golden.js';
import { consistent } from '../../testing/consistent.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, jsonToStruct, loadEnvoyProtos, parseProxy, type EnvoyProtos, type GenerateRequest } from '../../index.js';
import { serviceFromObject } from '../../../controllers/index.js';
import {
  buildCase,
  caseGeneratorOptions,
  generateSnapshot,
  loadCase,
  required,
  TEST_DOMAIN,
  type CaseObject,
  type GeneratorCase,
} from '../testing/test-cases.js';
import { newSidecarCdsGenerator, newSidecarEdsGenerator, newSidecarLdsGenerator, newSidecarRdsGenerator } from '../index.js';
import { buildPushContext, type PushContext } from '../../model/index.js';
import { generateRequest } from '../../testing/generate-request.js';
import { PushMemoMap } from '../../encoding/index.js';

const TESTDATA = fileURLToPath(new URL('./testdata/cds/', import.meta.url));
const FULL: GenerateRequest = generateRequest({ names: [], full: true, configsUpdated: [] });

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

function resourcesOf(result: ReturnType<ReturnType<typeof newSidecarCdsGenerator>['generate']>): Record<string, unknown>[] {
  expect(result).toBeDefined();
  return (result?.resources ?? []).map((named) => {
    const resource = (typeof named.resource === 'function' ? named.resource() : named.resource) as Record<string, unknown>;
    return resource;
  });
}

const cases = goldenCases(TESTDATA);

describe('sidecar CDS and EDS golden files', () => {
  test('there are at least 5 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(5);
  });

  test.each(cases)('%s', (name) => {
    const loaded = loadCase(TESTDATA, `${name}.in.yaml`);
    const { model, proxy } = loaded;
    const options = caseGeneratorOptions(loaded);
    const push = buildPushContext(model);
    const generators = {
      lds: newSidecarLdsGenerator(options),
      rds: newSidecarRdsGenerator(options),
      cds: newSidecarCdsGenerator(options),
      eds: newSidecarEdsGenerator(options),
    };
    const snapshot = generateSnapshot(proxy, push, generators, protos);
    expect(consistent(snapshot)).toEqual([]);
    const { clusters, endpoints } = snapshot;
    for (const cluster of clusters.filter((c) => c['type'] === 'EDS')) {
      expect((cluster['eds_cluster_config'] as { service_name: string }).service_name).toBe(cluster['name']);
    }
    // A wildcard EDS request gives the same set.
    expect(resourcesOf(generators.eds.generate(proxy, push, FULL))).toEqual(endpoints);
    expectGolden(TESTDATA, name, { clusters, endpoints });
  });
});

describe('sidecar generators', () => {
  function load(name: string): GeneratorCase & { push: PushContext } {
    const loaded = loadCase(TESTDATA, `${name}.in.yaml`);
    return { ...loaded, push: buildPushContext(loaded.model) };
  }

  test('the transport socket hook adds its fields to service clusters only', () => {
    const { proxy, push } = load('inbound');
    const seen: string[] = [];
    const cds = newSidecarCdsGenerator({
      clusterTransportSocket: (input) => {
        seen.push(`${input.direction} ${input.clusterName} ${input.service.name}:${input.servicePort.port}`);
        return input.direction === 'outbound'
          ? {
              transport_socket: {
                name: 'envoy.transport_sockets.raw_buffer',
                typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' },
              },
            }
          : undefined;
      },
    });
    const clusters = resourcesOf(cds.generate(proxy, push, FULL));
    for (const cluster of clusters) protos.encodeAny(CLUSTER_TYPE, cluster);
    const withSocket = clusters.filter((cluster) => 'transport_socket' in cluster).map((cluster) => cluster['name']);
    expect(withSocket).toEqual([
      'outbound|8000||httpbin.foo.svc.cluster.local',
      'outbound|80||httpbin-v1.foo.svc.cluster.local',
      'outbound|9000||httpbin.foo.svc.cluster.local',
    ]);
    expect(seen).toContain('inbound inbound|9090|| httpbin:9000');
    expect(seen).not.toContain(expect.stringContaining('PassthroughCluster'));
  });

  test('proxies whose inbound clusters are alike get one frozen cluster list per push; other inbound clusters, namespaces or a new push get their own', () => {
    const pod = (name: string, namespace: string, ip: string, app: string, ports: number[]): CaseObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, labels: { app }, annotations: { 'sidecar.mesh.io/status': 'injected' } },
      spec: { serviceAccountName: app, containers: [{ name: 'app', ports: ports.map((containerPort) => ({ containerPort })) }] },
      status: { podIP: ip },
    });
    const service = (name: string, namespace: string, targetPort: number): CaseObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort }] },
    });
    const { model } = buildCase(
      [
        { apiVersion: 'test.mesh.io/v1', kind: 'ProxyNode', id: 'sidecar~10.0.0.1~api-1.foo~foo.svc.cluster.local', metadata: { NAMESPACE: 'foo' } },
        service('api', 'foo', 8080),
        service('web', 'foo', 9090),
        service('api', 'bar', 8080),
        pod('api-1', 'foo', '10.0.0.1', 'api', [8080]),
        pod('api-2', 'foo', '10.0.0.2', 'api', [8080]),
        pod('web-1', 'foo', '10.0.0.3', 'web', [9090]),
        pod('api-1', 'bar', '10.0.1.1', 'api', [8080]),
      ],
      'alike',
    );
    const proxy = (name: string, namespace: string, ip: string, app: string) =>
      parseProxy({
        id: `sidecar~${ip}~${name}.${namespace}~${namespace}.svc.cluster.local`,
        metadata: jsonToStruct({ NAMESPACE: namespace, LABELS: { app } }),
      });
    const [api1, api2, web1, barApi1] = [
      proxy('api-1', 'foo', '10.0.0.1', 'api'),
      proxy('api-2', 'foo', '10.0.0.2', 'api'),
      proxy('web-1', 'foo', '10.0.0.3', 'web'),
      proxy('api-1', 'bar', '10.0.1.1', 'api'),
    ];
    const push = buildPushContext(model);
    // The memo the encoding layer hands the generators of one push.
    const ofPush: GenerateRequest = { ...FULL, memo: new PushMemoMap() };
    const cds = newSidecarCdsGenerator();
    const first = cds.generate(api1, push, ofPush)?.resources;
    expect(Object.isFrozen(first)).toBe(true);
    expect(cds.generate(api2, push, ofPush)?.resources).toBe(first);
    // The shared list is what the proxy would get alone.
    expect(resourcesOf(cds.generate(api2, push, ofPush))).toEqual(resourcesOf(newSidecarCdsGenerator().generate(api2, push, FULL)));
    const web = cds.generate(web1, push, ofPush)?.resources;
    expect(web).not.toBe(first);
    expect(web?.filter((resource) => resource.name.startsWith('inbound')).map((resource) => resource.name)).toEqual(['inbound|9090||']);
    expect(cds.generate(barApi1, push, ofPush)?.resources).not.toBe(first);
    expect(cds.generate(api1, buildPushContext(model), { ...FULL, memo: new PushMemoMap() })?.resources).not.toBe(first);
  });

  test('a DNS cluster shared within a namespace still resolves each proxy address family', () => {
    const { model } = buildCase(
      [
        { apiVersion: 'test.mesh.io/v1', kind: 'ProxyNode', id: 'sidecar~10.0.0.1~a-1.foo~foo.svc.cluster.local', metadata: { NAMESPACE: 'foo' } },
        {
          apiVersion: 'networking.mesh.io/v1',
          kind: 'ServiceEntry',
          metadata: { name: 'search', namespace: 'foo' },
          spec: { hosts: ['search.example.com'], resolution: 'DNS', ports: [{ number: 80, name: 'http', protocol: 'HTTP' }] },
        },
      ],
      'families',
    );
    const push = buildPushContext(model);
    const ofPush: GenerateRequest = { ...FULL, memo: new PushMemoMap() };
    const cds = newSidecarCdsGenerator();
    const familyOf = (ip: string) => {
      const proxy = parseProxy({ id: `sidecar~${ip}~p.foo~foo.svc.cluster.local`, metadata: jsonToStruct({ NAMESPACE: 'foo', INSTANCE_IPS: ip }) });
      const cluster = resourcesOf(cds.generate(proxy, push, ofPush)).find((resource) => resource['name'] === 'outbound|80||search.example.com');
      return cluster?.['dns_lookup_family'];
    };
    expect([familyOf('10.0.0.1'), familyOf('fd00::1'), familyOf('10.0.0.2')]).toEqual(['V4_ONLY', 'V6_ONLY', 'V4_ONLY']);
  });

  test('CDS ignores endpoint-only pushes', () => {
    const { proxy, push } = load('one-service');
    expect(
      newSidecarCdsGenerator().generate(
        proxy,
        push,
        generateRequest({ names: [], full: false, configsUpdated: [{ kind: 'Service', namespace: 'foo', name: 'httpbin' }] }),
      ),
    ).toBeUndefined();
  });

  test('an endpoint-only push answers the changed services the proxy holds, and nothing otherwise', () => {
    const { proxy, push } = load('two-ports');
    const eds = newSidecarEdsGenerator();
    const names = ['outbound|80||api.foo.svc.cluster.local', 'outbound|9000||api.foo.svc.cluster.local', 'outbound|80||other.foo.svc.cluster.local'];
    const changed = (name: string): GenerateRequest => generateRequest({ names, full: false, configsUpdated: [{ kind: 'Service', namespace: 'foo', name }] });
    expect(eds.generate(proxy, push, changed('api'))?.resources.map((r) => r.name)).toEqual(names.slice(0, 2));
    expect(eds.generate(proxy, push, changed('unrelated'))).toBeUndefined();
  });

  test('a shared (frozen) subscription answers an endpoint push exactly as a list of its own', () => {
    const { proxy, push } = load('two-ports');
    const eds = newSidecarEdsGenerator();
    const names = [
      'PassthroughCluster',
      'inbound|8080||',
      'outbound|80|v1|api.foo.svc.cluster.local',
      'outbound|80||api.foo.svc.cluster.local',
      'outbound|80||xapi.foo.svc.cluster.local',
      'outbound|80||api.foo.svc.cluster.local.evil',
      'outbound|9000||api.foo.svc.cluster.local',
      'outbound|80||other.foo.svc.cluster.local',
    ];
    const shared = Object.freeze([...names]);
    for (const changedNames of [['api'], ['other'], ['api', 'other'], ['unrelated'], ['xapi', 'api']]) {
      const request = (list: readonly string[], keyed?: { namesKey: string; memo: PushMemoMap }): GenerateRequest =>
        generateRequest({
          names: list,
          full: false,
          configsUpdated: changedNames.map((name) => ({ kind: 'Service' as const, namespace: 'foo', name })),
          ...keyed,
        });
      const own = eds.generate(proxy, push, request([...names]))?.resources.map((r) => r.name);
      expect({
        changedNames,
        names: eds.generate(proxy, push, request(shared, { namesKey: 'shared', memo: new PushMemoMap() }))?.resources.map((r) => r.name),
      }).toEqual({ changedNames, names: own });
    }
    expect(
      eds
        .generate(
          proxy,
          push,
          generateRequest({
            names: shared,
            namesKey: 'shared',
            memo: new PushMemoMap(),
            full: false,
            configsUpdated: [{ kind: 'Service', namespace: 'foo', name: 'api' }],
          }),
        )
        ?.resources.map((r) => r.name),
    ).toEqual(['outbound|80|v1|api.foo.svc.cluster.local', 'outbound|80||api.foo.svc.cluster.local', 'outbound|9000||api.foo.svc.cluster.local']);
  });

  test('a shared subscription of plain clusters is answered with one frozen list per push; subsets, lists of their own and a new push are not', () => {
    const { proxy, push, model } = load('two-ports');
    const eds = newSidecarEdsGenerator();
    // A shared subscription comes with its key, and the generators of one push share a memo.
    const memo = new PushMemoMap();
    const plain = Object.freeze([
      'outbound|80||api.foo.svc.cluster.local',
      'outbound|80||other.foo.svc.cluster.local',
      'outbound|9000||api.foo.svc.cluster.local',
    ]);
    const first = eds.generate(proxy, push, { ...FULL, names: plain, namesKey: 'plain', memo })?.resources;
    expect(Object.isFrozen(first)).toBe(true);
    expect(eds.generate(proxy, push, { ...FULL, names: plain, namesKey: 'plain', memo })?.resources).toBe(first);
    expect(first?.map((resource) => resource.name)).toEqual(plain);
    expect(eds.generate(proxy, buildPushContext(model), { ...FULL, names: plain, namesKey: 'plain', memo: new PushMemoMap() })?.resources).not.toBe(first);
    // A subset's assignment reads the DestinationRules of the proxy's namespace: never one list for every proxy.
    const withSubset = Object.freeze([...plain, 'outbound|80|v1|api.foo.svc.cluster.local']);
    const own = eds.generate(proxy, push, { ...FULL, names: withSubset, namesKey: 'with-subset', memo })?.resources;
    expect(Object.isFrozen(own)).toBe(false);
    expect(eds.generate(proxy, push, { ...FULL, names: withSubset, namesKey: 'with-subset', memo })?.resources).not.toBe(own);
    expect(Object.isFrozen(eds.generate(proxy, push, { ...FULL, names: [...plain], memo })?.resources)).toBe(false);
  });

  test.each([
    ['an unknown service', 'outbound|80||missing.foo.svc.cluster.local'],
    ['an unknown port', 'outbound|81||api.foo.svc.cluster.local'],
    ['an unknown subset', 'outbound|80|v9|api.foo.svc.cluster.local'],
    ['a name that is no cluster name', 'PassthroughCluster'],
  ])('%s gets an empty load assignment', (_label, name) => {
    const { proxy, push } = load('two-ports');
    const [assignment] = resourcesOf(newSidecarEdsGenerator().generate(proxy, push, { ...FULL, names: [name] }));
    expect(assignment).toEqual({ cluster_name: name, endpoints: [] });
    protos.encodeAny(ENDPOINT_TYPE, assignment as object);
  });

  test('LOCALHOST inbound mode gives STATIC inbound clusters to 127.0.0.1', () => {
    const { model, proxy } = loadCase(TESTDATA, 'inbound.in.yaml');
    model.setMeshConfig({ ...model.meshConfig(), inboundTrafficPolicy: { mode: 'LOCALHOST' } });
    const clusters = resourcesOf(newSidecarCdsGenerator().generate(proxy, buildPushContext(model), FULL));
    const inbound = clusters.find((cluster) => cluster['name'] === 'inbound|80||');
    expect(inbound).toMatchObject({
      type: 'STATIC',
      load_assignment: {
        cluster_name: 'inbound|80||',
        endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 80 } } } }] }],
      },
    });
    protos.encodeAny(CLUSTER_TYPE, inbound as object);
  });
});

describe('buildPushContext', () => {
  test('is a frozen snapshot: later model writes do not show, and the version moves', () => {
    const { model } = loadCase(TESTDATA, 'one-service.in.yaml');
    const before = buildPushContext(model);
    expect(Object.isFrozen(before)).toBe(true);
    expect(Object.isFrozen(before.services)).toBe(true);
    model.registry.applyService(
      required(
        serviceFromObject({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'aaa', namespace: 'foo' }, spec: { ports: [{ port: 1 }] } }, TEST_DOMAIN),
        'the Service',
      ),
    );
    expect(before.services.map((service) => service.name)).toEqual(['httpbin']);
    const after = buildPushContext(model);
    expect(after.services.map((service) => service.hostname)).toEqual(['aaa.foo.svc.cluster.local', 'httpbin.foo.svc.cluster.local']);
    expect(after.version).not.toBe(before.version);
    expect(buildPushContext(model).version).toBe(after.version);
  });

  test('indexes endpoints per service port and rules by resolved host', () => {
    const { model } = loadCase(TESTDATA, 'subsets.in.yaml');
    const push = buildPushContext(model);
    expect(push.endpointsByServicePort.get('reviews.bookinfo.svc.cluster.local:9080')?.map((e) => `${e.address}:${e.port}`)).toEqual([
      '10.0.2.1:9080',
      '10.0.2.2:9080',
    ]);
    expect(push.destinationRulesByHost.get('reviews.bookinfo.svc.cluster.local')?.map((entry) => entry.name)).toEqual(['reviews']);
  });
});
