import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { gatewayValuesSchema } from '../../install/index.js';
import { expectGoldenText } from '../../testing/golden.js';
import { CHARTS_DIR, helm } from '../../testing/helm.js';
import { expectSchemaFresh, expectValuesDocumented } from './testing/chart-sources.js';

// The gateway chart with the real helm: sources in step, strict lint, bad values refused, golden
// manifests, and an install into the API server double.
const CHART = join(CHARTS_DIR, 'gateway');
const TESTDATA = 'e2e/charts/testdata/gateway';
let workDir: string;
let kube: ApiServerDouble;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'gateway-chart-'));
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  await kube.writeKubeconfig(join(workDir, 'kubeconfig'));
  await kube
    .kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: 'mesh-system' } } });
});

afterAll(async () => {
  await kube?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('the gateway chart', () => {
  test('values.schema.json is generated from install/gateway-values.ts; values.yaml fits it; the README names every value', () => {
    expectSchemaFresh(CHART, gatewayValuesSchema);
    expectValuesDocumented(CHART, gatewayValuesSchema, ['annotations', 'podAnnotations', 'resources', 'env', 'nodeSelector', 'affinity']);
  });

  test('lints strictly and refuses bad values naming them', async () => {
    expect((await helm(['lint', '--strict', CHART], { workDir })).code).toBe(0);
    const bad = await helm(['template', 'g', CHART, '--set', 'service.type=Bogus'], { workDir });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("at '/service/type'");
  });

  test.each([
    ['default', []],
    ['every-value', ['-f', join(TESTDATA, 'every-value.in.yaml')]],
  ])('renders the golden manifest for %s', async (name, args) => {
    const result = await helm(['template', 'mesh-ingressgateway', CHART, '--namespace', 'mesh-system', ...args], { workDir });
    expect(result.stderr).toBe('');
    expectGoldenText(join(TESTDATA, `${name}.golden.yaml`), result.stdout);
  });

  test('installs into the API server double: a Deployment asking for the gateway template', async () => {
    const installed = await helm(['install', 'mesh-ingressgateway', CHART, '--namespace', 'mesh-system'], { workDir, kubeconfig: join(workDir, 'kubeconfig') });
    expect(installed.stderr).toBe('');
    const deployment = await kube.kubeConfig().makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'mesh-ingressgateway', namespace: 'mesh-system' });
    expect(deployment.spec?.template.metadata?.annotations?.['inject.mesh.io/templates']).toBe('gateway');
    expect(deployment.spec?.template.spec?.containers[0]).toMatchObject({ name: 'mesh-proxy', image: 'auto' });
  });
});
