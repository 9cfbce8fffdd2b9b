import { describe, expect, test } from '@jest/globals';
import { analyze, deployment, pod, service } from '../testing/fixtures.js';
import { ANNOTATION_ANALYZERS } from './annotation-analyzers.js';

const forKind = (kind: string) => ANNOTATION_ANALYZERS.find((a) => a.name === `annotations.K8sAnalyzer.${kind}`)!;

describe('annotations.K8sAnalyzer', () => {
  test('unknown, deprecated and invalid annotations on a pod', () => {
    const annotations = {
      'sidecar.mesh.io/injekt': 'true',
      'readiness.status.sidecar.mesh.io/applicationPorts': '8080',
      'sidecar.mesh.io/interceptionMode': 'MAGIC',
      'example.com/other': 'x',
    };
    expect(analyze(forKind('Pod'), [pod('p', 'foo', { annotations })])).toEqual([
      'Warning [MSH0108] (Pod p.foo) Unknown annotation: sidecar.mesh.io/injekt',
      'Warning [MSH0125] (Pod p.foo) Invalid annotation sidecar.mesh.io/interceptionMode: interceptionMode invalid, use REDIRECT,TPROXY,NONE',
      'Info [MSH0135] (Pod p.foo) Annotation "readiness.status.sidecar.mesh.io/applicationPorts" has been deprecated: the agent reads the probes of the pod itself and may not work in future mesh versions.',
    ]);
  });

  test('a pod annotation on a Service, or on a Deployment rather than its template, is misplaced', () => {
    expect(
      analyze(forKind('Service'), [service('s', 'foo', { app: 's' }, [{ name: 'http', port: 80 }], { annotations: { 'sidecar.mesh.io/inject': 'false' } })]),
    ).toEqual(['Warning [MSH0107] (Service s.foo) Misplaced annotation: sidecar.mesh.io/inject can only be applied to Pod']);
    expect(analyze(forKind('Deployment'), [deployment('d', 'foo', { app: 'd' }, { annotations: { 'proxy.mesh.io/config': '{}' } })])).toHaveLength(1);
  });

  test('valid pod annotations, in a Deployment template too, and the suppress annotation anywhere, stay quiet', () => {
    expect(
      analyze(forKind('Pod'), [pod('p', 'foo', { annotations: { 'sidecar.mesh.io/inject': 'true', 'traffic.sidecar.mesh.io/excludeInboundPorts': '9090' } })]),
    ).toEqual([]);
    const d = deployment('d', 'foo', { app: 'd' }, { annotations: { 'galley.mesh.io/analyze-suppress': 'MSH0117' } });
    (d as { spec: { template: { metadata: object } } }).spec.template.metadata = {
      labels: { app: 'd' },
      annotations: { 'status.sidecar.mesh.io/port': '15020' },
    };
    expect(analyze(forKind('Deployment'), [d])).toEqual([]);
  });
});
