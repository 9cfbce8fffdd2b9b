import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ALL_ANALYZERS, ALL_INPUTS, buildSnapshot, formatMessage, runAnalyzers } from '../../analysis/index.js';
import { meshdValuesSchema } from '../../install/index.js';
import { expectGoldenText, refreshingGolden } from '../../testing/golden.js';
import { expectSchemaFresh, expectValuesDocumented } from './testing/chart-sources.js';
import { CHARTS_DIR, helm } from '../../testing/helm.js';
import { BUILTIN_INJECTOR_CONFIG } from '../../webhook/inject/index.js';

// The meshd chart (deploy/charts/meshd) with the real helm: its schema is the typed source's, its
// injector ConfigMap is the injector's built-in defaults, it lints strictly, refuses bad values
// naming them, and renders the golden manifests.
const CHART = join(CHARTS_DIR, 'meshd');
const TESTDATA = 'e2e/charts/testdata/meshd';
let workDir: string;
let kube: ApiServerDouble;
let kubeconfig: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'meshd-chart-'));
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  kubeconfig = join(workDir, 'kubeconfig');
  await kube.writeKubeconfig(kubeconfig);
  await kube
    .kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: 'mesh-system' } } });
});

afterAll(async () => {
  await kube?.close();
  rmSync(workDir, { recursive: true, force: true });
});

const template = async (...args: string[]): Promise<string> => {
  const result = await helm(['template', 'meshd', CHART, '--namespace', 'mesh-system', ...args], { workDir });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return result.stdout;
};
type KubeObject = { kind: string; metadata: { name: string; labels?: Record<string, string> }; data?: Record<string, string> };
const objects = (manifest: string): KubeObject[] =>
  parseAllDocuments(manifest)
    .map((doc) => doc.toJS() as KubeObject)
    .filter((o) => o !== null);

describe('the meshd chart’s sources', () => {
  test('values.schema.json is generated from install/meshd-values.ts (REFRESH_GOLDEN=1 rewrites it)', () => {
    expectSchemaFresh(CHART, meshdValuesSchema);
  });

  test('values.yaml is valid under the typed schema, and the README names every value', () => {
    expectValuesDocumented(CHART, meshdValuesSchema, [
      'meshConfig',
      'env',
      'resources',
      'podAnnotations',
      'podLabels',
      'nodeSelector',
      'affinity',
      'lifecycle',
      'templates',
      'injectedAnnotations',
    ]);
  });

  test('the injection templates it ships are the injector’s built-in ones (REFRESH_GOLDEN=1 rewrites them)', () => {
    const templates = (parse(BUILTIN_INJECTOR_CONFIG.config) as { templates: Record<string, string> }).templates;
    for (const [name, text] of Object.entries(templates)) {
      const file = join(CHART, 'files', `${name}-injection-template.yaml`);
      if (refreshingGolden) writeFileSync(file, text);
      expect(readFileSync(file, 'utf8')).toBe(text);
    }
  });
});

describe('helm with the meshd chart', () => {
  test('lints strictly', async () => {
    const result = await helm(['lint', '--strict', CHART], { workDir });
    expect(result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.code).toBe(0);
  });

  test.each([
    [['--set', 'pilot.replicaCount=-1'], "at '/pilot/replicaCount': minimum: got -1, want 0"],
    [['--set', 'unknownKey=1'], "additional properties 'unknownKey' not allowed"],
    [['--set', 'meshConfig.bogus=1'], 'bogus'],
    [['--set', 'meshConfig.defaultConfig.concurrency=many'], 'concurrency'],
    [['--set', 'revision=Not_A_Label'], 'revision'],
  ])('refuses bad values naming them: %s', async (args, named) => {
    const result = await helm(['template', 'meshd', CHART, ...args], { workDir });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("values don't meet the specifications of the schema");
    expect(result.stderr).toContain(named);
  });

  test.each([
    ['default', []],
    ['revision', ['--set', 'revision=canary', '--set', 'revisionTags={prod}']],
    ['every-value', ['-f', join(TESTDATA, 'every-value.in.yaml')]],
  ])('renders the golden manifest for %s', async (name, args) => {
    expectGoldenText(join(TESTDATA, `${name}.golden.yaml`), await template(...args));
  });

  test('its injector ConfigMap holds the injector’s built-in defaults', async () => {
    const configMap = objects(await template()).find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'mesh-sidecar-injector');
    expect(parse(configMap?.data?.['config'] ?? '')).toEqual(parse(BUILTIN_INJECTOR_CONFIG.config));
    expect(JSON.parse(configMap?.data?.['values'] ?? '{}')).toMatchObject(JSON.parse(BUILTIN_INJECTOR_CONFIG.values) as object);
  });

  test('pilot.env sets BLOCKED_CIDRS_IN_JWKS_URIS on the discovery container (no default, as the reference); MSH0175 sees it', async () => {
    const requestAuthentication = {
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'RequestAuthentication',
      metadata: { name: 'jwt', namespace: 'foo' },
      spec: { jwtRules: [{ issuer: 'https://example.com', jwksUri: 'https://example.com/jwks' }] },
    };
    const codes = (manifest: string): string[] => {
      const snapshot = buildSnapshot({ objects: [...objects(manifest), requestAuthentication].map((object) => ({ object })), complete: ALL_INPUTS });
      const lines = runAnalyzers(
        snapshot,
        ALL_ANALYZERS.filter((analyzer) => analyzer.name === 'authn.BlockedCIDRsAnalyzer'),
      ).messages.map(formatMessage);
      return lines.map((line) => line.slice(0, line.indexOf(')') + 1));
    };
    expect(codes(await template())).toEqual(['Warning [MSH0175] (Deployment meshd.mesh-system)']);
    const set = await template('--set', 'pilot.env.BLOCKED_CIDRS_IN_JWKS_URIS=10.0.0.0/8\\,169.254.0.0/16');
    const deployment = objects(set).find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { name: string; env: { name: string; value?: string }[] }[] } } };
    };
    const discovery = deployment.spec.template.spec.containers.find((container) => container.name === 'discovery');
    expect(discovery?.env).toContainEqual({ name: 'BLOCKED_CIDRS_IN_JWKS_URIS', value: '10.0.0.0/8,169.254.0.0/16' });
    expect(codes(set)).toEqual([]);
  });

  test('every object carries the installer labels', async () => {
    for (const object of objects(await template('--set', 'revision=canary'))) {
      expect(object.metadata.labels).toMatchObject({
        'app.kubernetes.io/part-of': 'mesh',
        'operator.mesh.io/component': 'Pilot',
        'mesh.io/rev': 'canary',
        release: 'meshd',
      });
    }
  });
});

describe('helm install, upgrade and uninstall of the meshd chart into the API server double', () => {
  test('every rendered object is accepted; a mesh config change reaches the ConfigMap only, a pod template change rolls the Deployment', async () => {
    const installed = await helm(['install', 'meshd', CHART, '--namespace', 'mesh-system', '--set', 'revision=canary', '--set', 'revisionTags={prod}'], {
      workDir,
      kubeconfig,
    });
    expect(installed.stderr).toBe('');
    expect(installed.stdout).toContain('STATUS: deployed');
    expect(installed.stdout).toContain('kubectl label namespace <namespace> mesh.io/rev=canary');
    const core = kube.kubeConfig().makeApiClient(CoreV1Api);
    const deployment = await kube.kubeConfig().makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'meshd-canary', namespace: 'mesh-system' });
    expect(deployment.spec?.template.spec?.containers[0]?.args?.[0]).toBe('discovery');
    const meshBefore = await core.readNamespacedConfigMap({ name: 'mesh-canary', namespace: 'mesh-system' });
    expect(parse(meshBefore.data?.['mesh'] ?? '')).toMatchObject({
      trustDomain: 'cluster.local',
      defaultConfig: { discoveryAddress: 'meshd-canary.mesh-system.svc:15012' },
    });

    const upgraded = await helm(['upgrade', 'meshd', CHART, '--namespace', 'mesh-system', '--reuse-values', '--set', 'meshConfig.trustDomain=example.org'], {
      workDir,
      kubeconfig,
    });
    expect(upgraded.stderr).toBe('');
    const meshAfter = await core.readNamespacedConfigMap({ name: 'mesh-canary', namespace: 'mesh-system' });
    expect(parse(meshAfter.data?.['mesh'] ?? '')).toMatchObject({ trustDomain: 'example.org' });
    const after = await kube.kubeConfig().makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'meshd-canary', namespace: 'mesh-system' });
    expect(after.metadata?.generation).toBe(deployment.metadata?.generation);

    // A value of the Deployment's pod template rolls it: a new generation with the new env.
    const rolled = await helm(['upgrade', 'meshd', CHART, '--namespace', 'mesh-system', '--reuse-values', '--set', 'pilot.env.PILOT_DEBOUNCE_AFTER=200ms'], {
      workDir,
      kubeconfig,
    });
    expect(rolled.stderr).toBe('');
    const next = await kube.kubeConfig().makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'meshd-canary', namespace: 'mesh-system' });
    expect(next.metadata?.generation).toBe((deployment.metadata?.generation ?? 0) + 1);
    expect(next.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'PILOT_DEBOUNCE_AFTER')?.value).toBe('200ms');

    const uninstalled = await helm(['uninstall', 'meshd', '--namespace', 'mesh-system'], { workDir, kubeconfig });
    expect(uninstalled.stderr).toBe('');
    expect(await core.readNamespacedConfigMap({ name: 'mesh-canary', namespace: 'mesh-system' }).catch(() => undefined)).toBeUndefined();
  });
});
