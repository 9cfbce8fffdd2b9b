import { describe, expect, test } from '@jest/globals';
import { applyMeshConfig, DEFAULT_MESH_CONFIG, parseMeshConfigYaml } from '../../crds/index.js';
import { analyze, namespace, pod } from '../testing/fixtures.js';
import { imageAnalyzer, injectionAnalyzer, revisionAnalyzer } from './injection-analyzers.js';

const proxy = (image = 'docker.io/mesh/proxyv2:1.0'): object => ({ name: 'mesh-proxy', image });
const injectedPod = (name: string, ns: string, extra: object = {}): object => pod(name, ns, { containers: [{ name: 'app' }, proxy()], ...extra });
const injectorConfigMap = (name: string, tag: string): object => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'mesh-system' },
  data: { config: '', values: JSON.stringify({ global: { hub: 'docker.io/mesh', tag, proxy: { image: 'proxyv2' } } }) },
});

describe('injection.Analyzer', () => {
  const notInjected = (name: string): string =>
    `Info [MSH0102] (Namespace ${name}) The namespace is not enabled for mesh injection. Run 'kubectl label namespace ${name} mesh-injection=enabled' to enable it, or 'kubectl label namespace ${name} mesh-injection=disabled' to explicitly mark it as not needing injection.`;

  test('a namespace without a label is not injected, pods or none; a pod of an injected namespace without proxy is missing it', () => {
    const objects = [
      namespace('plain'),
      pod('a', 'plain'),
      namespace('empty'),
      namespace('meshed', { 'mesh-injection': 'enabled' }),
      pod('b', 'meshed'),
      injectedPod('c', 'meshed'),
    ];
    expect(analyze(injectionAnalyzer, objects)).toEqual([
      'Warning [MSH0103] (Pod b.meshed) The pod b is missing the mesh proxy. This can often be resolved by restarting or redeploying the workload.',
      notInjected('empty'),
      notInjected('plain'),
    ]);
  });

  test('both injection labels in force are reported with their values; disabled beside a revision is no conflict', () => {
    expect(
      analyze(injectionAnalyzer, [
        namespace('both', { 'mesh-injection': 'enabled', 'mesh.io/rev': 'canary' }),
        namespace('off', { 'mesh-injection': 'disabled', 'mesh.io/rev': 'canary' }),
      ]),
    ).toEqual([
      'Warning [MSH0123] (Namespace both) The namespace has more than one type of injection labels [mesh-injection=enabled mesh.io/rev=canary], which may lead to undefined behavior. Make sure only one injection label exists.',
    ]);
  });

  test('with an injector that injects every namespace by default, an unlabelled namespace is MSH0148 instead', () => {
    const injector = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'mesh-sidecar-injector', namespace: 'mesh-system' },
      data: { config: '', values: JSON.stringify({ sidecarInjectorWebhook: { enableNamespacesByDefault: true } }) },
    };
    expect(analyze(injectionAnalyzer, [injector, namespace('plain')])).toEqual([
      'Info [MSH0148] (Namespace plain) is enabled for mesh injection, as the mesh is installed with enableNamespacesByDefault as true.',
    ]);
  });

  test.each([
    ['system namespaces and the root namespace', [namespace('kube-system'), pod('dns', 'kube-system'), namespace('mesh-system'), pod('meshd', 'mesh-system')]],
    ['a namespace explicitly disabled', [namespace('off', { 'mesh-injection': 'disabled' }), pod('a', 'off')]],
    ['a pod that opts out', [namespace('on', { 'mesh.io/rev': 'canary' }), pod('a', 'on', { annotations: { 'sidecar.mesh.io/inject': 'false' } })]],
  ])('%s stay quiet', (_case, objects) => {
    expect(analyze(injectionAnalyzer, objects)).toEqual([]);
  });
});

describe('injection.RevisionAnalyzer', () => {
  test('a pod of revision canary in a namespace moved to stable is reported; matching revisions stay quiet', () => {
    const ns = namespace('apps', { 'mesh.io/rev': 'stable' });
    const status = (revision: string): Record<string, string> => ({ 'sidecar.mesh.io/status': JSON.stringify({ containers: ['mesh-proxy'], revision }) });
    expect(
      analyze(revisionAnalyzer, [
        ns,
        injectedPod('old', 'apps', { annotations: status('canary') }),
        injectedPod('new', 'apps', { labels: { 'mesh.io/rev': 'stable' } }),
      ]),
    ).toEqual([
      'Warning [MSH1003] (Pod old.apps) The pod was injected by revision "canary" but its namespace selects revision "stable". Restart or redeploy the workload to move it to "stable".',
    ]);
    expect(analyze(revisionAnalyzer, [namespace('d', { 'mesh-injection': 'enabled' }), injectedPod('p', 'd', { annotations: status('default') })])).toEqual([]);
  });
});

describe('injection.ImageAnalyzer', () => {
  const mismatch = (ns: string, pods: string): string =>
    `Warning [MSH0158] (Namespace ${ns}) The mesh proxy images of the pods running in the namespace do not match the image defined in the injection configuration (pod names: [${pods}]). This often happens after upgrading the mesh control-plane and can be fixed by redeploying the pods.`;
  const nativePod = (name: string, ns: string, image: string): object => {
    const p = pod(name, ns) as { spec: object };
    p.spec = { ...p.spec, initContainers: [{ ...proxy(image), restartPolicy: 'Always' }] };
    return p;
  };

  test('the pods of a namespace whose proxy image is not the one of its revision injector are reported once, per namespace', () => {
    const objects = [
      injectorConfigMap('mesh-sidecar-injector', '1.1'),
      injectorConfigMap('mesh-sidecar-injector-canary', '1.0'),
      namespace('a', { 'mesh-injection': 'enabled' }),
      namespace('b', { 'mesh.io/rev': 'canary' }),
      injectedPod('p', 'a'),
      injectedPod('o', 'a'),
      nativePod('n', 'a', 'docker.io/mesh/proxyv2:1.0'),
      nativePod('fresh', 'a', 'docker.io/mesh/proxyv2:1.1'),
      injectedPod('custom', 'a', { annotations: { 'sidecar.mesh.io/proxyImage': 'mine/proxy:1' } }),
      injectedPod('q', 'b'),
    ];
    expect(analyze(imageAnalyzer, objects)).toEqual([mismatch('a', 'n o p')]);
  });

  test("the image of the pod's image type is the expected one too: the mesh config's, or its proxy config annotation's", () => {
    const objects = [
      injectorConfigMap('mesh-sidecar-injector', '1.0'),
      namespace('a', { 'mesh-injection': 'enabled' }),
      injectedPod('plain', 'a'),
      pod('distroless', 'a', { containers: [{ name: 'app' }, proxy('docker.io/mesh/proxyv2:1.0-distroless')] }),
      pod('debug', 'a', { containers: [{ name: 'app' }, proxy('docker.io/mesh/proxyv2:1.0-debug')] }),
      pod('debug-asked', 'a', {
        annotations: { 'proxy.mesh.io/config': 'image:\n  imageType: debug\n' },
        containers: [{ name: 'app' }, proxy('docker.io/mesh/proxyv2:1.0-debug')],
      }),
    ];
    const distroless = applyMeshConfig(DEFAULT_MESH_CONFIG, parseMeshConfigYaml('defaultConfig:\n  image:\n    imageType: distroless\n', 'test'));
    expect(analyze(imageAnalyzer, objects, { meshConfig: distroless })).toEqual([mismatch('a', 'debug')]);
    expect(analyze(imageAnalyzer, objects)).toEqual([mismatch('a', 'debug distroless')]);
  });

  test('a native sidecar is a proxy: no MSH0103 for it', () => {
    expect(analyze(injectionAnalyzer, [namespace('a', { 'mesh-injection': 'enabled' }), nativePod('n', 'a', 'docker.io/mesh/proxyv2:1.0')])).toEqual([]);
  });
});
