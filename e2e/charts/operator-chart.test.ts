import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppsV1Api } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { operatorValuesSchema } from '../../install/index.js';
import { CHARTS_DIR, helm } from '../../testing/helm.js';
import { expectSchemaFresh, expectValuesDocumented } from './testing/chart-sources.js';

// The operator chart with the real helm: sources in step, strict lint, bad values refused, and a
// helm install into the API server double (meshctl operator dump|init render the same chart; their
// golden output is pinned in cli/meshctl/meshctl-operator.test.ts).
const CHART = join(CHARTS_DIR, 'operator');
let workDir: string;
let kube: ApiServerDouble;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'operator-chart-'));
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  await kube.writeKubeconfig(join(workDir, 'kubeconfig'));
});

afterAll(async () => {
  await kube?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('the operator chart', () => {
  test('values.schema.json is generated from install/operator-values.ts; values.yaml fits it; the README names every value', () => {
    expectSchemaFresh(CHART, operatorValuesSchema);
    expectValuesDocumented(CHART, operatorValuesSchema, []);
    expect(readFileSync(join(CHART, 'values.yaml'), 'utf8')).toContain('operatorNamespace: mesh-operator');
  });

  test('its CRD is the base chart’s MeshOperator CRD, byte for byte', () => {
    expect(readFileSync(join(CHART, 'crds', 'meshoperator.yaml'), 'utf8')).toBe(readFileSync(join(CHARTS_DIR, 'base', 'files', 'meshoperator.yaml'), 'utf8'));
  });

  test('lints strictly and refuses bad values naming them', async () => {
    expect((await helm(['lint', '--strict', CHART], { workDir })).code).toBe(0);
    const bad = await helm(['template', 'o', CHART, '--set', 'watchedNamespaces=Not A Namespace'], { workDir });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("at '/watchedNamespaces'");
  });

  test('installs into the API server double: the operator Deployment runs `meshctl operator server` on the watched namespaces', async () => {
    const installed = await helm(['install', 'mesh-operator', CHART, '--set', 'watchedNamespaces=mesh-system\\,team-a'], {
      workDir,
      kubeconfig: join(workDir, 'kubeconfig'),
    });
    expect(installed.stderr).toBe('');
    const deployment = await kube.kubeConfig().makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'mesh-operator', namespace: 'mesh-operator' });
    const container = deployment.spec?.template.spec?.containers[0];
    expect(container?.command).toEqual(['meshctl']);
    expect(container?.args).toEqual([
      'operator',
      'server',
      '--watchedNamespaces=mesh-system,team-a',
      '--manifests=/usr/lib/mesh/deploy',
      '--monitoringAddr=:8383',
    ]);
  });
});
