import { describe, expect, test } from '@jest/globals';
import { analyze, deployment, namespace, pod, service } from '../testing/fixtures.js';
import { applicationUidAnalyzer, deploymentApplicationUidAnalyzer, multiServiceAnalyzer, portNameAnalyzer } from './workload-analyzers.js';

describe('service.PortNameAnalyzer', () => {
  test('names without a protocol prefix and no appProtocol are reported', () => {
    const svc = service('web', 'foo', { app: 'web' }, [
      { name: 'web', port: 80, targetPort: 8080 },
      { name: 'http-web', port: 81 },
      { name: 'grpc-web', port: 82 },
      { name: 'db', port: 83, appProtocol: 'tcp' },
      { name: 'tcp', port: 84 },
    ]);
    expect(analyze(portNameAnalyzer, [svc])).toEqual([
      "Info [MSH0118] (Service web.foo) Port name web (port: 80, targetPort: 8080) doesn't follow the naming convention of mesh port.",
    ]);
  });
  test('a Service of the mesh’s control plane is not checked wherever it runs', () => {
    expect(analyze(portNameAnalyzer, [service('meshd', 'elsewhere', { app: 'meshd' }, [{ name: 'xds', port: 15010 }], { labels: { mesh: 'pilot' } })])).toEqual(
      [],
    );
  });
  test('the root namespace and kube-system are not checked', () => {
    expect(
      analyze(portNameAnalyzer, [
        service('meshd', 'mesh-system', { app: 'meshd' }, [{ name: 'xds', port: 15010 }]),
        service('dns', 'kube-system', { k: 'v' }, [{ name: 'dns', port: 53 }]),
      ]),
    ).toEqual([]);
  });
});

describe('deployment.MultiServiceAnalyzer', () => {
  const injected = namespace('foo', { 'mesh-injection': 'enabled' });
  test('two services on one port with HTTP and TCP protocols are reported', () => {
    const objects = [
      injected,
      deployment('web', 'foo', { app: 'web' }),
      service('a', 'foo', { app: 'web' }, [{ name: 'http', port: 80 }]),
      service('b', 'foo', { app: 'web' }, [{ name: 'tcp', port: 80 }]),
    ];
    expect(analyze(multiServiceAnalyzer, objects)).toEqual([
      'Warning [MSH0116] (Deployment web.foo) This deployment web is associated with multiple services using port 80 but different protocols: [a b]',
    ]);
  });
  test('a deployment of an injected namespace with no service is reported; elsewhere, or with one protocol, quiet', () => {
    expect(analyze(multiServiceAnalyzer, [injected, deployment('lonely', 'foo', { app: 'lonely' })])).toEqual([
      'Warning [MSH0117] (Deployment lonely.foo) No service associated with this deployment. Service mesh deployments must be associated with a service.',
    ]);
    expect(analyze(multiServiceAnalyzer, [namespace('bar'), deployment('lonely', 'bar', { app: 'lonely' })])).toEqual([]);
    const same = [
      injected,
      deployment('web', 'foo', { app: 'web' }),
      service('a', 'foo', { app: 'web' }, [{ name: 'http', port: 80 }]),
      service('b', 'foo', { app: 'web' }, [{ name: 'http-x', port: 80 }]),
    ];
    expect(analyze(multiServiceAnalyzer, same)).toEqual([]);
  });

  test('Services sending one targetPort from different ports are reported, by targetPort as written, one Service per port', () => {
    const objects = [
      injected,
      deployment('web', 'foo', { app: 'web' }),
      service('a', 'foo', { app: 'web' }, [
        { name: 'http', port: 80, targetPort: 8080 },
        { name: 'http-named', port: 81, targetPort: 'web' },
      ]),
      service('b', 'foo', { app: 'web' }, [
        { name: 'http', port: 8080 },
        { name: 'http-named', port: 82, targetPort: 'web' },
        { name: 'http-same', port: 80, targetPort: 8080 },
      ]),
    ];
    expect(analyze(multiServiceAnalyzer, objects)).toEqual([
      'Warning [MSH0137] (Deployment web.foo) This deployment web is associated with multiple services [foo/a foo/b] using targetPort "web" but different ports: [81 82].',
      'Warning [MSH0137] (Deployment web.foo) This deployment web is associated with multiple services [foo/b foo/b] using targetPort "8080" but different ports: [80 8080].',
    ]);
  });

  test('conflicting targetPorts of a Deployment not in the mesh stay quiet: namespace not injected, or the template opting out', () => {
    const ports = (ns: string): object[] => [
      service('a', ns, { app: 'web' }, [{ name: 'http', port: 80, targetPort: 8080 }]),
      service('b', ns, { app: 'web' }, [{ name: 'http', port: 8080 }]),
    ];
    expect(analyze(multiServiceAnalyzer, [namespace('bar'), deployment('web', 'bar', { app: 'web' }), ...ports('bar')])).toEqual([]);
    const optedOut = deployment('web', 'foo', { app: 'web', 'sidecar.mesh.io/inject': 'false' });
    expect(analyze(multiServiceAnalyzer, [injected, optedOut, ...ports('foo')])).toEqual([]);
    const optedIn = deployment('web', 'bar', { app: 'web', 'sidecar.mesh.io/inject': 'true' });
    expect(analyze(multiServiceAnalyzer, [namespace('bar'), optedIn, ...ports('bar')])).toHaveLength(1);
  });
});

describe('applicationUID.Analyzer', () => {
  test('UID 1337 on the pod or an application container is reported; on the proxy container it is not', () => {
    expect(analyze(applicationUidAnalyzer, [pod('a', 'foo', { securityContext: { runAsUser: 1337 } })])).toEqual([
      'Warning [MSH0144] (Pod a.foo) User ID (UID) 1337 is reserved for the sidecar proxy.',
    ]);
    expect(analyze(applicationUidAnalyzer, [pod('b', 'foo', { containers: [{ name: 'app', securityContext: { runAsUser: 1337 } }] })])).toHaveLength(1);
    expect(
      analyze(applicationUidAnalyzer, [pod('c', 'foo', { containers: [{ name: 'app' }, { name: 'mesh-proxy', securityContext: { runAsUser: 1337 } }] })]),
    ).toEqual([]);
    // The pod's own UID counts even where every container sets another, as the reference reads it.
    expect(
      analyze(applicationUidAnalyzer, [
        pod('d', 'foo', { securityContext: { runAsUser: 1337 }, containers: [{ name: 'app', securityContext: { runAsUser: 1000 } }] }),
      ]),
    ).toHaveLength(1);
  });
  test('deployment templates too', () => {
    expect(
      analyze(deploymentApplicationUidAnalyzer, [
        deployment('web', 'foo', { app: 'web' }, {}, { containers: [{ name: 'app', securityContext: { runAsUser: 1337 } }] }),
      ]),
    ).toHaveLength(1);
  });
  test('the mesh’s own control plane (a mesh label, or release: mesh) and the operator container are never findings', () => {
    const asProxy = { containers: [{ name: 'discovery', securityContext: { runAsUser: 1337 } }] };
    const daemon = deployment('meshd', 'mesh-system', { app: 'meshd' }, { labels: { app: 'meshd', mesh: 'pilot' } }, asProxy);
    const released = deployment('gw', 'edge', { app: 'gw' }, { labels: { release: 'mesh' } }, asProxy);
    expect(analyze(deploymentApplicationUidAnalyzer, [daemon, released])).toEqual([]);
    expect(analyze(applicationUidAnalyzer, [pod('meshd-1', 'mesh-system', { labels: { mesh: 'pilot' }, containers: asProxy.containers })])).toEqual([]);
    expect(
      analyze(applicationUidAnalyzer, [pod('operator-1', 'mesh-operator', { containers: [{ name: 'mesh-operator', securityContext: { runAsUser: 1337 } }] })]),
    ).toEqual([]);
    // A look-alike is an application: only the label's name counts, not a value that mentions the mesh.
    const lookAlike = deployment('web', 'foo', { app: 'web' }, { labels: { app: 'mesh', release: 'mesh-web' } }, asProxy);
    expect(analyze(deploymentApplicationUidAnalyzer, [lookAlike])).toEqual([
      'Warning [MSH0144] (Deployment web.foo) User ID (UID) 1337 is reserved for the sidecar proxy.',
    ]);
  });
});
