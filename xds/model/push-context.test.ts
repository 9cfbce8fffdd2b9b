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

  test('ServiceEntry, WorkloadEntry and WorkloadGroup are stored but not translated: the context is as without them', () => {
    const model = meshWithOneService();
    const without = buildPushContext(model);
    const meta = { namespace: 'foo', name: 'external' };
    const apiVersion = 'networking.mesh.io/v1alpha3';
    applyValidated(model, {
      apiVersion,
      kind: 'ServiceEntry',
      metadata: meta,
      spec: { hosts: ['api.example.com'], resolution: 'DNS', ports: [{ number: 443, name: 'tls', protocol: 'TLS' }] },
    });
    applyValidated(model, { apiVersion, kind: 'WorkloadEntry', metadata: meta, spec: { address: '10.1.0.1', labels: { app: 'httpbin' } } });
    applyValidated(model, { apiVersion, kind: 'WorkloadGroup', metadata: meta, spec: { template: { serviceAccount: 'vm' } } });

    expect(model.configStore.list('ServiceEntry').map((entry) => entry.name)).toEqual(['external']);
    const withThem = buildPushContext(model);
    expect([...withThem.configGenerations.keys()]).toEqual([...without.configGenerations.keys()]);
    expect(JSON.stringify({ ...withThem, version: '' }, replacer)).toBe(JSON.stringify({ ...without, version: '' }, replacer));
  });
});

/** Maps as entries, so that two contexts compare by content. */
function replacer(_key: string, value: unknown): unknown {
  return value instanceof Map ? [...value.entries()] : value;
}
