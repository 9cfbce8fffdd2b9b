import { describe, expect, test } from '@jest/globals';
import { ANNOTATIONS } from '../../names/index.js';
import { analyze, deployment, namespace, pod, service } from '../testing/fixtures.js';
import { ANNOTATION_CATALOGUE, isMeshAnnotation } from './annotation-catalogue.js';
import { ANNOTATION_ANALYZERS, alphaAnnotationAnalyzer } from './annotation-analyzers.js';

const forKind = (kind: string) => ANNOTATION_ANALYZERS.find((a) => a.name === `annotations.K8sAnalyzer.${kind}`)!;

describe('annotations.K8sAnalyzer', () => {
  test('unknown, deprecated and invalid annotations on a pod', () => {
    const annotations = {
      'sidecar.mesh.io/injekt': 'true',
      'readiness.status.sidecar.mesh.io/applicationPorts': '8080',
      'sidecar.mesh.io/interceptionMode': 'MAGIC',
      'sidecar.mesh.io/statsInclusionPrefixes': 'cluster',
      'example.com/other': 'x',
    };
    expect(analyze(forKind('Pod'), [pod('p', 'foo', { annotations })])).toEqual([
      'Warning [MSH0108] (Pod p.foo) Unknown annotation: sidecar.mesh.io/injekt',
      'Warning [MSH0125] (Pod p.foo) Invalid annotation sidecar.mesh.io/interceptionMode: interceptionMode invalid, use REDIRECT,TPROXY,NONE',
      'Info [MSH0135] (Pod p.foo) Annotation "readiness.status.sidecar.mesh.io/applicationPorts" has been deprecated: the agent reads the probes of the pod itself and may not work in future mesh versions.',
      'Info [MSH0135] (Pod p.foo) Annotation "sidecar.mesh.io/statsInclusionPrefixes" has been deprecated and may not work in future mesh versions.',
    ]);
  });

  test('the inject annotation is deprecated for the label, unless the label is there too', () => {
    const deprecated =
      'Info [MSH0135] (Pod p.foo) Annotation "sidecar.mesh.io/inject" has been deprecated in favor of the "sidecar.mesh.io/inject" label and may not work in future mesh versions.';
    expect(analyze(forKind('Pod'), [pod('p', 'foo', { annotations: { 'sidecar.mesh.io/inject': 'true' } })])).toEqual([deprecated]);
    const both = pod('p', 'foo', { annotations: { 'sidecar.mesh.io/inject': 'true' }, labels: { 'sidecar.mesh.io/inject': 'true' } });
    expect(analyze(forKind('Pod'), [both])).toEqual([]);
  });

  test('a pod annotation elsewhere is misplaced (and still deprecated when it is); the catalogue knows the kinds of the others', () => {
    const onService = service('s', 'foo', { app: 's' }, [{ name: 'http', port: 80 }], {
      annotations: { 'sidecar.mesh.io/inject': 'false', 'networking.mesh.io/exportTo': '.', 'traffic.mesh.io/nodeSelector': '{}' },
    });
    expect(analyze(forKind('Service'), [onService])).toEqual([
      'Warning [MSH0107] (Service s.foo) Misplaced annotation: sidecar.mesh.io/inject can only be applied to Pod',
      'Info [MSH0135] (Service s.foo) Annotation "sidecar.mesh.io/inject" has been deprecated in favor of the "sidecar.mesh.io/inject" label and may not work in future mesh versions.',
    ]);
    const ns = {
      ...namespace('n'),
      metadata: { name: 'n', annotations: { 'kubernetes.io/ingress.class': 'mesh', 'topology.mesh.io/controlPlaneClusters': '*' } },
    };
    expect(analyze(forKind('Namespace'), [ns])).toEqual([
      'Warning [MSH0107] (Namespace n) Misplaced annotation: kubernetes.io/ingress.class can only be applied to Ingress',
    ]);
    expect(analyze(forKind('Deployment'), [deployment('d', 'foo', { app: 'd' }, { annotations: { 'proxy.mesh.io/config': '{}' } })])).toEqual([
      'Warning [MSH0107] (Deployment d.foo) Misplaced annotation: proxy.mesh.io/config can only be applied to Pod',
    ]);
  });

  test('valid pod annotations, in a Deployment template too, annotations for any kind, and those the mesh sets stay quiet', () => {
    const annotations = { 'traffic.sidecar.mesh.io/excludeInboundPorts': '9090', 'sidecar.mesh.io/status': '{}', 'sidecar.mesh.io/nativeSidecar': 'true' };
    expect(analyze(forKind('Pod'), [pod('p', 'foo', { annotations, labels: { 'sidecar.mesh.io/inject': 'true' } })])).toEqual([]);
    const d = deployment(
      'd',
      'foo',
      { app: 'd' },
      { annotations: { 'galley.mesh.io/analyze-suppress': 'MSH0117', 'gateway.mesh.io/controller-version': '5' } },
    );
    (d as { spec: { template: { metadata: object } } }).spec.template.metadata = {
      labels: { app: 'd' },
      annotations: { 'status.sidecar.mesh.io/port': '15020', 'mesh.io/rev': 'canary' },
    };
    expect(analyze(forKind('Deployment'), [d])).toEqual([]);
  });

  test('every mesh annotation the injector reads is in the catalogue', () => {
    for (const key of Object.values(ANNOTATIONS).filter(isMeshAnnotation)) expect([key, ANNOTATION_CATALOGUE.has(key)]).toEqual([key, true]);
  });
});

describe('annotations.AlphaAnalyzer', () => {
  test('alpha annotations are reported; beta and stable ones, and those the mesh sets, are not', () => {
    const annotations = {
      'sidecar.mesh.io/proxyCPU': '100m',
      'proxy.mesh.io/config': '{}',
      'sidecar.mesh.io/status': '{}',
      'sidecar.mesh.io/interceptionMode': 'REDIRECT',
    };
    const captured = pod('captured', 'foo', { annotations });
    (captured as { spec: object }).spec = { ...(captured as { spec: object }).spec, initContainers: [{ name: 'mesh-init' }] };
    const svc = service('s', 'foo', { app: 's' }, [{ name: 'http', port: 80 }], {
      annotations: { 'traffic.mesh.io/nodeSelector': '{}', 'networking.mesh.io/exportTo': '.' },
    });
    expect(analyze(alphaAnnotationAnalyzer, [captured, pod('cni', 'foo', { annotations }), svc])).toEqual([
      'Info [MSH0136] (Pod captured.foo) Annotation "sidecar.mesh.io/interceptionMode" is part of an alpha-phase feature and may be incompletely supported.',
      'Info [MSH0136] (Pod captured.foo) Annotation "sidecar.mesh.io/proxyCPU" is part of an alpha-phase feature and may be incompletely supported.',
      'Info [MSH0136] (Pod cni.foo) Annotation "sidecar.mesh.io/proxyCPU" is part of an alpha-phase feature and may be incompletely supported.',
      'Info [MSH0136] (Service s.foo) Annotation "networking.mesh.io/exportTo" is part of an alpha-phase feature and may be incompletely supported.',
    ]);
  });
});
