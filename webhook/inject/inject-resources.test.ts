import { describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { parseAppProbers } from '../../agent/proxy/app-probers.js';
import { readGolden } from '../../testing/golden.js';
import { injectResources, kubeInjectTemplate, type Pod } from './index.js';
import { builtinInjector, meshConfigWith } from './testing/injector-fixture.js';

const kubeInject = kubeInjectTemplate(builtinInjector(), { meshConfig: meshConfigWith() });

const containers = '      containers:\n      - name: app\n        image: app:1\n';
const INPUT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    metadata:
      labels:
        app: web
    spec:
${containers}---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80 # kept as written
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: app
            image: app:1
---
apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: DaemonSet
  metadata:
    name: agent
  spec:
    template:
      spec:
        hostNetwork: true
        containers:
        - name: agent
          image: agent:1
- apiVersion: apps/v1
  kind: StatefulSet
  metadata:
    name: db
  spec:
    template:
      metadata:
        annotations:
          sidecar.mesh.io/inject: "false"
      spec:
        containers:
        - name: db
          image: db:1
`;

function containerNames(template: unknown): string[] {
  const spec = (template as { spec: { containers: { name: string }[] } }).spec;
  return spec.containers.map((c) => c.name);
}

describe('injectResources', () => {
  const result = injectResources(INPUT, kubeInject);
  const documents = parseAllDocuments(result.text)
    .map((doc) => doc.toJS() as Record<string, unknown> | null)
    .filter((doc): doc is Record<string, unknown> => doc !== null);

  test('every document comes out in order, each followed by ---', () => {
    expect(documents.map((doc) => doc['kind'])).toEqual(['Deployment', 'Service', 'CronJob', 'List']);
    expect(result.text.match(/^---$/gm)).toHaveLength(4);
    expect(result.text.endsWith('---\n')).toBe(true);
  });

  test('pod templates are injected, with the owner as the workload', () => {
    const deployment = documents[0] as { spec: { template: Pod } };
    expect(containerNames(deployment.spec.template)).toEqual(['app', 'mesh-proxy']);
    expect(JSON.stringify(deployment.spec.template)).toContain('kubernetes://apis/apps/v1/namespaces/shop/deployments/web');
    expect((deployment.spec.template['metadata'] as Record<string, unknown>)['namespace']).toBeUndefined();
    const cronJob = documents[2] as { spec: { jobTemplate: { spec: { template: Pod } } } };
    expect(containerNames(cronJob.spec.jobTemplate.spec.template)).toEqual(['app', 'mesh-proxy']);
  });

  test('other kinds pass through as written', () => {
    expect(result.text).toContain('- port: 80 # kept as written');
  });

  test('skipped templates give the reference messages as warnings', () => {
    expect(result.warnings).toEqual([
      '===> Skipping injection because "agent" has host networking enabled\n',
      '===> Skipping injection because "db" has sidecar injection disabled\n',
    ]);
  });

  test('an injected pod is not injected again', () => {
    const injected = readGolden<Pod>('webhook/inject/testdata/inject', 'hello');
    const again = injectResources(JSON.stringify(injected), kubeInject);
    expect(again.warnings).toEqual(['===> Skipping injection because "default/hello-7d4b9c7f5-abcde" has injected "mesh-proxy" sidecar already\n']);
  });
});

test('MESH_ORCH_APP_PROBERS is what the agent parses', () => {
  const injected = readGolden<Pod>('webhook/inject/testdata/inject', 'hello-probes');
  const proxy = ((injected['spec'] as Record<string, unknown>)['containers'] as { name: string; env: { name: string; value?: string }[] }[]).find(
    (c) => c.name === 'mesh-proxy',
  );
  const text = proxy?.env.find((e) => e.name === 'MESH_ORCH_APP_PROBERS')?.value ?? '';
  const probers = parseAppProbers(text);
  expect([...probers.keys()]).toEqual(['/app-health/hello/livez', '/app-health/hello/readyz', '/app-health/world/livez', '/app-health/world/startupz']);
  expect(probers.get('/app-health/world/livez')).toEqual({ httpGet: { path: '/live', port: 90, scheme: 'HTTPS' } });
  expect(probers.get('/app-health/hello/readyz')).toEqual({ httpGet: { port: 3333 }, timeoutSeconds: 5 });
});
