import { describe, expect, test } from '@jest/globals';
import { newMeshModel, type Workload } from '../../controllers/index.js';
import { applyValidated, DENY_HTTPBIN_FROM_BAR } from '../testing/mesh-xds.js';
import { buildPushContext, newPushContextBuilder, servicePortKey } from './push-context.js';

const HOST = 'httpbin.foo.svc.cluster.local';

function pod(name: string, address: string, ready: boolean): Workload {
  return {
    name,
    namespace: 'foo',
    address,
    labels: { app: 'httpbin' },
    serviceAccount: 'httpbin',
    hasSidecar: true,
    nodeName: '',
    clusterId: 'cluster-a',
    ready,
    active: true,
    containerPorts: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
  };
}

function meshWithOneService() {
  const model = newMeshModel({ domain: 'cluster.local', clusterId: 'cluster-a', useEndpointSlices: false });
  model.registry.applyService({
    name: 'httpbin',
    namespace: 'foo',
    hostname: HOST,
    ports: [{ name: 'http', port: 8000, targetPort: 80, protocol: 'TCP' }],
    selector: { app: 'httpbin' },
    type: 'ClusterIP',
    labels: {},
    resourceVersion: '1',
  });
  model.registry.applyWorkload(pod('httpbin-1', '10.0.0.1', true));
  applyValidated(model, DENY_HTTPBIN_FROM_BAR);
  return model;
}

describe('the push context builder', () => {
  test('an endpoint-only push keeps the last context’s config part and rebuilds the registry part', () => {
    const model = meshWithOneService();
    const builder = newPushContextBuilder(model);
    const first = builder.build(undefined, { full: true });
    model.registry.applyWorkload(pod('httpbin-2', '10.0.0.2', true));
    const next = builder.build(first, { full: false });

    expect(next.authorizationPolicies).toBe(first.authorizationPolicies);
    expect(next.configGenerations).toBe(first.configGenerations);
    expect(next.destinationRulesByHost).toBe(first.destinationRulesByHost);
    expect(next.endpointsByServicePort.get(servicePortKey(HOST, 8000))?.map((e) => e.address)).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(next.workloadsByAddress.get('10.0.0.2')?.map((w) => w.name)).toEqual(['httpbin-2']);
    expect(next.version).not.toBe(first.version);
    // What a full build of the same model gives, but for the parts kept.
    expect(JSON.stringify({ ...next, version: '' }, replacer)).toBe(JSON.stringify({ ...buildPushContext(model), version: '' }, replacer));
  });

  test('a full push, or a previous context it did not build last, builds everything again', () => {
    const model = meshWithOneService();
    const builder = newPushContextBuilder(model);
    const first = builder.build(undefined, { full: true });
    const full = builder.build(first, { full: true });
    expect(full.authorizationPolicies).not.toBe(first.authorizationPolicies);
    const other = buildPushContext(model);
    expect(builder.build(other, { full: false }).authorizationPolicies).not.toBe(other.authorizationPolicies);
  });

  test('a policy changed before an endpoint-only push waits for the full push that follows it', () => {
    const model = meshWithOneService();
    const builder = newPushContextBuilder(model);
    const first = builder.build(undefined, { full: true });
    model.configStore.delete('AuthorizationPolicy', 'foo', 'deny-bar');
    expect(builder.build(first, { full: false }).authorizationPolicies.all).toHaveLength(1);
    expect(builder.build(first, { full: true }).authorizationPolicies.all).toHaveLength(0);
  });

  test('a WorkloadGroup is stored but not translated: the context is as without it', () => {
    const model = meshWithOneService();
    const without = buildPushContext(model);
    applyValidated(model, {
      apiVersion: 'networking.mesh.io/v1alpha3',
      kind: 'WorkloadGroup',
      metadata: { namespace: 'foo', name: 'vm' },
      spec: { template: { serviceAccount: 'vm' } },
    });
    expect(model.configStore.list('WorkloadGroup').map((entry) => entry.name)).toEqual(['vm']);
    const withIt = buildPushContext(model);
    expect([...withIt.configGenerations.keys()]).toEqual([...without.configGenerations.keys()]);
    expect(JSON.stringify({ ...withIt, version: '' }, replacer)).toBe(JSON.stringify({ ...without, version: '' }, replacer));
  });

  test('a ServiceEntry adds a service per host; a WorkloadEntry its Service selects adds an endpoint, in the generations', () => {
    const model = meshWithOneService();
    const meta = { namespace: 'foo', name: 'external' };
    const apiVersion = 'networking.mesh.io/v1alpha3';
    applyValidated(model, {
      apiVersion,
      kind: 'ServiceEntry',
      metadata: meta,
      spec: { hosts: ['api.example.com'], resolution: 'DNS', ports: [{ number: 443, name: 'tls', protocol: 'TLS' }] },
    });
    applyValidated(model, {
      apiVersion,
      kind: 'WorkloadEntry',
      metadata: meta,
      spec: { address: '10.1.0.1', labels: { app: 'httpbin' }, serviceAccount: 'vm' },
    });
    const push = buildPushContext(model);
    expect(push.services.map((service) => service.hostname)).toEqual(['api.example.com', HOST]);
    expect(push.serviceByHost.get('api.example.com')?.entry).toMatchObject({ resolution: 'DNS', meshExternal: true, entryName: 'external' });
    expect(push.endpointsByServicePort.get(servicePortKey(HOST, 8000))?.map((endpoint) => [endpoint.address, endpoint.port, endpoint.workload?.name])).toEqual([
      ['10.0.0.1', 80, 'httpbin-1'],
      ['10.1.0.1', 80, 'external'],
    ]);
    expect(push.serviceAccountsByHost.get(HOST)).toEqual(['httpbin', 'vm']);
    expect([...push.configGenerations.keys()].filter((key) => key.endsWith('/external'))).toEqual(['ServiceEntry/foo/external', 'WorkloadEntry/foo/external']);
  });
});

/** Maps as entries, so that two contexts compare by content. */
function replacer(_key: string, value: unknown): unknown {
  return value instanceof Map ? [...value.entries()] : value;
}
