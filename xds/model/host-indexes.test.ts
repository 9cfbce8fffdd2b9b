import { describe, expect, test } from '@jest/globals';
import { newMeshModel, type Service } from '../../controllers/index.js';
import { jsonToStruct } from '../envoy/index.js';
import { parseProxy, type Proxy } from '../proxy.js';
import { virtualServiceFor } from './virtual-service-selection.js';
import { applyValidated } from '../testing/mesh-xds.js';
import { destinationRuleFor } from './destination-rule-policy.js';
import { buildPushContext } from './push-context.js';

const HOST = 'httpbin.foo.svc.cluster.local';
const SERVICE: Service = {
  name: 'httpbin',
  namespace: 'foo',
  hostname: HOST,
  ports: [{ name: 'http', port: 8000, targetPort: 80, protocol: 'TCP' }],
  selector: { app: 'httpbin' },
  type: 'ClusterIP',
  labels: {},
  resourceVersion: '1',
};

function sidecarIn(namespace: string): Proxy {
  return parseProxy({ id: `sidecar~10.0.0.5~client.${namespace}~${namespace}.svc.cluster.local`, metadata: jsonToStruct({ NAMESPACE: namespace }) });
}

function virtualService(namespace: string, name: string, hosts: string[], extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'networking.mesh.io/v1alpha3',
    kind: 'VirtualService',
    metadata: { namespace, name },
    spec: { hosts, http: [{ route: [{ destination: { host: HOST } }] }], ...extra },
  };
}

function destinationRule(namespace: string, name: string, host: string) {
  return { apiVersion: 'networking.mesh.io/v1alpha3', kind: 'DestinationRule', metadata: { namespace, name }, spec: { host } };
}

function modelWith(...objects: unknown[]) {
  const model = newMeshModel({ domain: 'cluster.local', clusterId: 'cluster-a', useEndpointSlices: false });
  model.registry.applyService(SERVICE);
  for (const object of objects) applyValidated(model, object);
  return model;
}

describe('VirtualServices indexed by host', () => {
  test('an exact host wins over every wildcard; one the proxy cannot see falls back to the most specific wildcard', () => {
    const push = buildPushContext(
      modelWith(
        virtualService('foo', 'a-svc', ['*.svc.cluster.local']),
        virtualService('foo', 'b-namespace', ['*.foo.svc.cluster.local']),
        virtualService('foo', 'c-exact-private', [HOST], { exportTo: ['.'] }),
        virtualService('foo', 'd-gateway-only', [HOST], { gateways: ['mesh-system/ingress'] }),
      ),
    );
    expect(virtualServiceFor(push, sidecarIn('foo'), HOST)?.name).toBe('c-exact-private');
    expect(virtualServiceFor(push, sidecarIn('bar'), HOST)?.name).toBe('b-namespace');
    expect(virtualServiceFor(push, sidecarIn('bar'), 'other.bar.svc.cluster.local')?.name).toBe('a-svc');
  });

  test('among equals the first in namespace, name order; a look-alike suffix is no match', () => {
    const push = buildPushContext(
      modelWith(virtualService('foo', 'second', [HOST]), virtualService('bar', 'first', [HOST]), virtualService('foo', 'suffix', ['*.oo.svc.cluster.local'])),
    );
    expect(virtualServiceFor(push, sidecarIn('foo'), HOST)?.name).toBe('first');
    expect(virtualServiceFor(push, sidecarIn('foo'), 'x.evilfoo.svc.cluster.local')).toBeUndefined();
    expect(virtualServiceFor(push, sidecarIn('foo'), 'x.oo.svc.cluster.local')?.name).toBe('suffix');
  });
});

describe('DestinationRules of wildcard hosts', () => {
  test('the proxy’s namespace first, then an exact host, then the most specific wildcard', () => {
    const push = buildPushContext(
      modelWith(
        destinationRule('foo', 'any', '*'),
        destinationRule('foo', 'svc', '*.svc.cluster.local'),
        destinationRule('foo', 'namespace', '*.foo.svc.cluster.local'),
        destinationRule('bar', 'exact', HOST),
        destinationRule('bar', 'svc', '*.svc.cluster.local'),
      ),
    );
    expect(destinationRuleFor(push, sidecarIn('foo'), SERVICE)?.name).toBe('namespace');
    expect(destinationRuleFor(push, sidecarIn('bar'), SERVICE)?.name).toBe('exact');
    expect(destinationRuleFor(push, sidecarIn('baz'), SERVICE)?.name).toBe('namespace');
  });
});
