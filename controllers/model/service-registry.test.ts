import { describe, expect, test } from '@jest/globals';
import type { KubeObject } from '../../runtime/index.js';
import { endpointSliceFromObject, serviceFromObject, workloadFromPod } from './registry-conversion.js';
import { newServiceRegistry, type ServiceRegistryWriter } from './service-registry.js';
import type { Service, Workload } from './registry-types.js';

const DOMAIN = 'cluster.local';
const CLUSTER = 'cluster-a';

function service(namespace: string, name: string, spec: Record<string, unknown>): Service {
  return serviceFromObject({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace, resourceVersion: '1' }, spec }, DOMAIN) as Service;
}

interface PodInput {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ip?: string;
  sa?: string;
  ports?: { name?: string; containerPort: number }[];
  phase?: string;
  ready?: boolean;
  node?: string;
}

function pod(namespace: string, name: string, input: PodInput = {}): Workload {
  const object: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: input.labels ?? {}, ...(input.annotations ? { annotations: input.annotations } : {}) },
    spec: {
      ...(input.sa ? { serviceAccountName: input.sa } : {}),
      ...(input.node ? { nodeName: input.node } : {}),
      containers: [{ name: 'app', ports: input.ports ?? [] }],
    },
    status: {
      ...(input.ip ? { podIP: input.ip } : {}),
      ...(input.phase ? { phase: input.phase } : {}),
      ...(input.ready !== undefined ? { conditions: [{ type: 'Ready', status: input.ready ? 'True' : 'False' }] } : {}),
    },
  };
  return workloadFromPod(object, CLUSTER) as Workload;
}

/** The foo namespace of the samples: httpbin (named target port, two pods), sleep, a legacy pod. */
function fooRegistry(): ServiceRegistryWriter {
  const registry = newServiceRegistry({ endpointSource: 'pods', clusterId: CLUSTER });
  registry.applyService(
    service('foo', 'httpbin', {
      selector: { app: 'httpbin' },
      ports: [
        { name: 'http', port: 8000, targetPort: 'web', protocol: 'TCP', appProtocol: 'http' },
        { name: 'grpc', port: 9000, targetPort: 9090 },
      ],
    }),
  );
  registry.applyService(service('foo', 'sleep', { selector: { app: 'sleep' }, ports: [{ port: 80 }] }));
  registry.applyService(service('foo', 'manual', { ports: [{ port: 80 }] }));
  registry.applyWorkload(
    pod('foo', 'httpbin-1', {
      labels: { app: 'httpbin', version: 'v1' },
      annotations: { 'sidecar.mesh.io/status': 'injected' },
      ip: '10.0.0.1',
      sa: 'httpbin',
      ports: [{ name: 'web', containerPort: 80 }],
    }),
  );
  registry.applyWorkload(
    pod('foo', 'httpbin-2', {
      labels: { app: 'httpbin', version: 'v2', 'security.mesh.io/tlsMode': 'mesh' },
      ip: '10.0.0.2',
      sa: 'httpbin-v2',
      ports: [{ name: 'web', containerPort: 8080 }],
      ready: false,
    }),
  );
  registry.applyWorkload(
    pod('foo', 'httpbin-done', { labels: { app: 'httpbin' }, ip: '10.0.0.9', phase: 'Succeeded', ports: [{ name: 'web', containerPort: 80 }] }),
  );
  registry.applyWorkload(pod('foo', 'httpbin-pending', { labels: { app: 'httpbin' }, ports: [{ name: 'web', containerPort: 80 }] }));
  registry.applyWorkload(pod('foo', 'sleep-1', { labels: { app: 'sleep' }, ip: '10.0.0.3' }));
  registry.applyWorkload(pod('bar', 'httpbin-other', { labels: { app: 'httpbin' }, ip: '10.0.1.1', ports: [{ name: 'web', containerPort: 80 }] }));
  return registry;
}

describe('registry conversion', () => {
  test.each([
    ['injected (annotation)', { annotations: { 'sidecar.mesh.io/status': '{}' } }, true],
    ['labelled tlsMode mesh', { labels: { 'security.mesh.io/tlsMode': 'mesh' } }, true],
    ['labelled tlsMode disabled', { labels: { 'security.mesh.io/tlsMode': 'disabled' } }, false],
    ['plain pod', {}, false],
  ] as const)('sidecar: %s', (_name, input, expected) => {
    expect(pod('ns', 'p', input as PodInput).hasSidecar).toBe(expected);
  });

  test('a workload carries address, service account (default when unset), node, cluster and readiness', () => {
    expect(pod('ns', 'p', { ip: '10.1.1.1', node: 'n1' })).toMatchObject({
      address: '10.1.1.1',
      serviceAccount: 'default',
      nodeName: 'n1',
      clusterId: CLUSTER,
      ready: true,
      active: true,
    });
    expect(pod('ns', 'p', { ready: false }).ready).toBe(false);
    expect(pod('ns', 'p', { phase: 'Failed' }).active).toBe(false);
  });

  test('a service has its host name, ports with target ports (defaulting to the port) and no selector when empty', () => {
    const svc = service('foo', 'web', {
      selector: {},
      ports: [{ port: 80 }, { name: 'x', port: 'bad' }, { name: 'h', port: 81, targetPort: 'http', protocol: 'UDP' }],
    });
    expect(svc.hostname).toBe('web.foo.svc.cluster.local');
    expect(svc.selector).toBeUndefined();
    expect(svc.ports).toEqual([
      { name: '', port: 80, targetPort: 80, protocol: 'TCP' },
      { name: 'h', port: 81, targetPort: 'http', protocol: 'UDP' },
    ]);
  });
});

describe('service registry lookups', () => {
  const registry = fooRegistry();

  test.each([
    ['httpbin.foo.svc.cluster.local', 'foo/httpbin'],
    ['sleep.foo.svc.cluster.local', 'foo/sleep'],
    ['httpbin.bar.svc.cluster.local', undefined],
    ['httpbin.foo', undefined],
  ])('service by host %s', (host, expected) => {
    const found = registry.serviceByHost(host);
    expect(found ? `${found.namespace}/${found.name}` : undefined).toBe(expected);
  });

  test.each([
    ['service port 8000 (named target port, resolved per pod)', 8000, ['10.0.0.1:80 ready', '10.0.0.2:8080 not-ready']],
    ['service port 9000 (numeric target port)', 9000, ['10.0.0.1:9090 ready', '10.0.0.2:9090 not-ready']],
    ['a port the service does not have', 1234, []],
  ])('endpoints of httpbin, %s', (_name, port, expected) => {
    const endpoints = registry.endpoints('foo', 'httpbin', port);
    expect(endpoints.map((e) => `${e.address}:${e.port} ${e.ready ? 'ready' : 'not-ready'}`)).toEqual(expected);
  });

  test('endpoints carry the workload, its labels, service account, sidecar and cluster', () => {
    const [first] = registry.endpoints('foo', 'httpbin', 8000);
    expect(first).toEqual({
      address: '10.0.0.1',
      port: 80,
      servicePort: 8000,
      servicePortName: 'http',
      ready: true,
      workload: { namespace: 'foo', name: 'httpbin-1' },
      labels: { app: 'httpbin', version: 'v1' },
      serviceAccount: 'httpbin',
      hasSidecar: true,
      clusterId: CLUSTER,
      nodeName: '',
    });
    expect(registry.endpoints('foo', 'manual')).toEqual([]);
    expect(registry.endpoints('foo', 'sleep').map((e) => `${e.address}:${e.port}`)).toEqual(['10.0.0.3:80']);
  });

  test.each([
    ['app=httpbin in foo', 'foo', { app: 'httpbin' }, ['httpbin-1', 'httpbin-2', 'httpbin-done', 'httpbin-pending']],
    ['app=httpbin,version=v2 in foo', 'foo', { app: 'httpbin', version: 'v2' }, ['httpbin-2']],
    ['empty selector: all of the namespace', 'bar', {}, ['httpbin-other']],
    ['no match', 'foo', { app: 'none' }, []],
  ])('workloads matching %s', (_name, namespace, selector, expected) => {
    expect(registry.workloadsMatching(namespace, selector).map((w) => w.name)).toEqual(expected);
  });

  test.each([
    ['httpbin-1 container port 80', 'httpbin-1', 80, ['httpbin:8000']],
    ['httpbin-2 container port 8080', 'httpbin-2', 8080, ['httpbin:8000']],
    ['httpbin-2 container port 9090', 'httpbin-2', 9090, ['httpbin:9000']],
    ['httpbin-1 container port 8080 (bound on the other pod only)', 'httpbin-1', 8080, []],
    ['an unknown workload', 'nobody', 80, []],
  ])('service ports binding %s', (_name, workload, port, expected) => {
    expect(registry.servicePortsForContainerPort('foo', workload, port).map((b) => `${b.service.name}:${b.port.port}`)).toEqual(expected);
  });

  test.each([
    ['both versions', 'foo', { app: 'httpbin' }, [80, 8080, 9090]],
    ['version v1', 'foo', { app: 'httpbin', version: 'v1' }, [80, 9090]],
    ['a workload no service selects', 'foo', { app: 'sleep' }, [80]],
    ['no workload: unknown', 'foo', { app: 'none' }, undefined],
  ])('container ports bound for the validator: %s', (_name, namespace, selector, expected) => {
    expect(registry.servicePortsForWorkload(namespace, selector)).toEqual(expected);
  });

  test('service accounts behind a service, and workloads by address', () => {
    expect(registry.serviceAccounts('foo', 'httpbin')).toEqual(['httpbin', 'httpbin-v2']);
    expect(registry.serviceAccounts('foo', 'manual')).toEqual([]);
    expect(registry.workloadsByAddress('10.0.0.3').map((w) => w.name)).toEqual(['sleep-1']);
    expect(registry.servicesOfWorkload(registry.workload('foo', 'httpbin-1') as Workload).map((s) => s.name)).toEqual(['httpbin']);
  });
});

describe('service registry changes', () => {
  test.each([
    [
      'the same pod again',
      (r: ServiceRegistryWriter) => r.applyWorkload(r.workload('foo', 'httpbin-1') as Workload),
      { changed: false, identityChanged: false, endpoints: [] },
    ],
    [
      'a new address',
      (r: ServiceRegistryWriter) => r.applyWorkload({ ...(r.workload('foo', 'httpbin-1') as Workload), address: '10.0.0.7' }),
      { changed: true, identityChanged: false, endpoints: ['foo/httpbin'] },
    ],
    [
      'readiness',
      (r: ServiceRegistryWriter) => r.applyWorkload({ ...(r.workload('foo', 'httpbin-2') as Workload), ready: true }),
      { changed: true, identityChanged: false, endpoints: ['foo/httpbin'] },
    ],
    [
      'labels leaving one service for another',
      (r: ServiceRegistryWriter) => r.applyWorkload({ ...(r.workload('foo', 'sleep-1') as Workload), labels: { app: 'httpbin' } }),
      { changed: true, identityChanged: true, endpoints: ['foo/httpbin', 'foo/sleep'] },
    ],
    [
      'a pod no service selects',
      (r: ServiceRegistryWriter) => r.applyWorkload(pod('foo', 'lonely', { ip: '10.0.0.50' })),
      { changed: true, identityChanged: false, endpoints: [] },
    ],
    [
      'deleting a selected pod',
      (r: ServiceRegistryWriter) => r.deleteWorkload('foo', 'sleep-1'),
      { changed: true, identityChanged: false, endpoints: ['foo/sleep'] },
    ],
    ['deleting an unknown pod', (r: ServiceRegistryWriter) => r.deleteWorkload('foo', 'nobody'), { changed: false, identityChanged: false, endpoints: [] }],
  ])('%s', (_name, write, expected) => {
    const registry = fooRegistry();
    const change = write(registry);
    expect({
      changed: change.changed,
      identityChanged: change.identityChanged,
      endpoints: change.endpointsChanged.map((k) => `${k.namespace}/${k.name}`),
    }).toEqual(expected);
  });

  test('a service change is reported as such and recomputes its endpoints; its old host is forgotten', () => {
    const registry = fooRegistry();
    const same = registry.applyService({ ...(registry.service('foo', 'sleep') as Service), resourceVersion: '2' });
    expect(same.changed).toBe(false);
    const moved = registry.applyService(service('foo', 'sleep', { selector: { app: 'httpbin' }, ports: [{ port: 80, targetPort: 'web' }] }));
    expect(moved).toMatchObject({ changed: true, serviceChanged: true, endpointsChanged: [{ namespace: 'foo', name: 'sleep' }] });
    expect(registry.endpoints('foo', 'sleep').map((e) => e.address)).toEqual(['10.0.0.1', '10.0.0.2']);
    const gone = registry.deleteService('foo', 'sleep');
    expect(gone).toMatchObject({ changed: true, serviceChanged: true });
    expect(registry.serviceByHost('sleep.foo.svc.cluster.local')).toBeUndefined();
    expect(registry.endpoints('foo', 'sleep')).toEqual([]);
  });
});

describe('service registry with EndpointSlices', () => {
  const slice = (
    name: string,
    service: string,
    endpoints: Record<string, unknown>[],
    ports = [{ name: 'http', port: 8080 }],
  ): ReturnType<typeof endpointSliceFromObject> =>
    endpointSliceFromObject({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace: 'foo', labels: { 'kubernetes.io/service-name': service } },
      addressType: 'IPv4',
      ports,
      endpoints,
    });

  test('endpoints come from the slices of the service, with pod metadata when the pod is known', () => {
    const registry = newServiceRegistry({ endpointSource: 'endpoint-slices', clusterId: CLUSTER });
    registry.applyService(service('foo', 'web', { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] }));
    registry.applyWorkload(pod('foo', 'web-1', { labels: { app: 'web', 'security.mesh.io/tlsMode': 'mesh' }, ip: '10.0.0.1', sa: 'web' }));
    const added = registry.applyEndpointSlice(
      slice('web-abc', 'web', [
        { addresses: ['10.0.0.1'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: 'web-1' } },
        { addresses: ['10.0.0.2'], conditions: { ready: false } },
      ])!,
    );
    expect(added.endpointsChanged).toEqual([{ namespace: 'foo', name: 'web' }]);
    registry.applyEndpointSlice(slice('web-def', 'web', [{ addresses: ['10.0.0.1'] }])!);
    expect(registry.endpoints('foo', 'web').map((e) => `${e.address}:${e.port} ${e.ready} ${e.serviceAccount || '-'} ${e.hasSidecar}`)).toEqual([
      '10.0.0.1:8080 true web true',
      '10.0.0.2:8080 false - false',
    ]);
    // A pod change reaches the endpoints that refer to it.
    const relabelled = registry.applyWorkload({ ...(registry.workload('foo', 'web-1') as Workload), serviceAccount: 'web-new' });
    expect(relabelled.endpointsChanged).toEqual([{ namespace: 'foo', name: 'web' }]);
    expect(registry.serviceAccounts('foo', 'web')).toEqual(['web-new']);
    // A slice port without the service port's name serves nothing for it.
    registry.applyEndpointSlice(slice('web-abc', 'web', [{ addresses: ['10.0.0.3'] }], [{ name: 'other', port: 1 }])!);
    expect(registry.endpoints('foo', 'web').map((e) => e.address)).toEqual(['10.0.0.1']);
    expect(registry.deleteEndpointSlice('foo', 'web-def').endpointsChanged).toEqual([{ namespace: 'foo', name: 'web' }]);
    expect(registry.endpoints('foo', 'web')).toEqual([]);
  });

  test('addresses whose pod is not known yet are pending, once per address, until the pod arrives or the slice goes', () => {
    const registry = newServiceRegistry({ endpointSource: 'endpoint-slices', clusterId: CLUSTER });
    registry.applyService(service('foo', 'web', { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] }));
    registry.applyService(service('foo', 'web-alias', { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] }));
    const late = { addresses: ['10.0.0.7'], targetRef: { kind: 'Pod', name: 'web-7' } };
    registry.applyEndpointSlice(slice('web-abc', 'web', [late, { addresses: ['10.0.0.8'] }])!);
    registry.applyEndpointSlice(slice('alias-abc', 'web-alias', [late])!);
    expect(registry.endpointsPendingPod()).toBe(1);
    expect(registry.endpoints('foo', 'web').map((e) => `${e.address} ${e.podPending ?? false}`)).toEqual(['10.0.0.7 true', '10.0.0.8 false']);
    registry.applyWorkload(pod('foo', 'web-7', { labels: { app: 'web' }, ip: '10.0.0.7' }));
    expect(registry.endpointsPendingPod()).toBe(0);
    registry.deleteWorkload('foo', 'web-7');
    expect(registry.endpointsPendingPod()).toBe(1);
    registry.deleteEndpointSlice('foo', 'web-abc');
    expect(registry.endpointsPendingPod()).toBe(1);
    registry.deleteService('foo', 'web-alias');
    expect(registry.endpointsPendingPod()).toBe(0);
  });
});
