import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { parse, stringify } from 'yaml';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { renderCrdManifests } from '../../crds/crd-manifests.js';
import { baseValuesSchema, chartValuesJsonSchema } from '../../install/index.js';
import { expectGoldenText } from '../../testing/golden.js';
import { helm, withCrdsNamedOnly } from '../../testing/helm.js';
import { kubectl } from '../../testing/kubectl.js';
import { PROJECT_ROOT } from '../../testing/run-bin.js';
import { waitFor } from '../../testing/wait-for.js';
import { allows, BASE_CHART, clusterRoleRules, objectsOf, renderBase } from './testing/base-chart.js';

// The base chart (CRDs, the daemon's ClusterRole and binding, the default validation webhook)
// checked with the real helm: its typed values, lint, golden renders, and an install, upgrade and
// uninstall against the API server double.
const GOLDEN = join(PROJECT_ROOT, 'e2e', 'charts', 'testdata', 'base');
let workDir: string;

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), 'base-chart-'));
});
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** The dotted paths of the schema's keys: `global`, `global.configValidation`, `revision`, … */
function valuePaths(shape: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(shape).flatMap(([key, schema]) => {
    const path = `${prefix}${key}`;
    let inner = schema as { def?: { innerType?: unknown; shape?: Record<string, unknown> }; shape?: Record<string, unknown> };
    while (inner.def?.innerType) inner = inner.def.innerType as typeof inner;
    return inner.shape ? [path, ...valuePaths(inner.shape, `${path}.`)] : [path];
  });
}

describe('the base chart’s files', () => {
  test('files/crd-all.gen.yaml is crds/generated/crds.yaml, byte for byte (REFRESH_GOLDEN=1 rewrites it)', () => {
    expectGoldenText(join(BASE_CHART, 'files', 'crd-all.gen.yaml'), renderCrdManifests());
    expect(readFileSync(join(BASE_CHART, 'files', 'crd-all.gen.yaml'), 'utf8')).toBe(
      readFileSync(join(PROJECT_ROOT, 'crds', 'generated', 'crds.yaml'), 'utf8'),
    );
  });

  test('values.schema.json is written from install/base-values.ts (REFRESH_GOLDEN=1 rewrites it)', () => {
    expectGoldenText(join(BASE_CHART, 'values.schema.json'), chartValuesJsonSchema(baseValuesSchema));
  });

  test('values.yaml parses under the zod schema and holds exactly its defaults', () => {
    const values: unknown = parse(readFileSync(join(BASE_CHART, 'values.yaml'), 'utf8'));
    expect(baseValuesSchema.safeParse(values).success).toBe(true);
    expect(values).toEqual(baseValuesSchema.parse({}));
  });

  test('README.md names every value', () => {
    const readme = readFileSync(join(BASE_CHART, 'README.md'), 'utf8');
    const paths = valuePaths(baseValuesSchema.shape);
    expect(paths).toEqual(expect.arrayContaining(['global.configValidation', 'revision', 'defaultRevision', 'serviceAccounts', 'ownerName']));
    expect(paths.filter((path) => !readme.includes(`\`${path}\``))).toEqual([]);
  });
});

describe('helm lint', () => {
  test('passes --strict', async () => {
    const result = await helm(['lint', '--strict', BASE_CHART], { workDir });
    expect(result.stderr + result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(result.code).toBe(0);
  });

  test.each([
    [['--set', 'unknownKey=1'], 'unknownKey'],
    [['--set', 'global.configValidation=maybe'], 'configValidation'],
    [['--set', 'serviceAccounts=meshd'], 'serviceAccounts'],
    [['--set', 'revision=Not_A_Label'], 'revision'],
  ])('fails with %j, naming the value', async (args, name) => {
    const result = await helm(['lint', '--strict', BASE_CHART, ...args], { workDir });
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain(name);
  });
});

describe('helm template', () => {
  test.each([
    ['default', []],
    [
      'revision-owner',
      [
        '--set',
        'revision=canary',
        '--set',
        'defaultRevision=canary',
        '--set',
        'ownerName=installed-state-canary',
        '--set',
        'serviceAccounts={meshd,meshd-canary}',
      ],
    ],
    ['default-validator', ['--set', 'defaultRevision=default']],
    ['no-validation', ['--set', 'defaultRevision=default', '--set', 'global.configValidation=false']],
  ])('%s', async (name, args) => {
    const manifest = await renderBase(workDir, args);
    expectGoldenText(join(GOLDEN, `${name}.golden.yaml`), withCrdsNamedOnly(manifest));
    for (const object of objectsOf(manifest)) {
      expect(object.metadata.labels).toEqual(
        expect.objectContaining({
          'app.kubernetes.io/managed-by': 'Helm',
          'app.kubernetes.io/part-of': 'mesh',
          'install.operator.mesh.io/owning-resource': name === 'revision-owner' ? 'installed-state-canary' : 'unknown',
          'operator.mesh.io/component': 'Base',
          'mesh.io/rev': name === 'revision-owner' ? 'canary' : 'default',
          release: 'base',
        }),
      );
    }
  });

  test('base.excludedCRDs leaves CRDs out; base.enableCRDTemplates=false keeps the files’ own labels', async () => {
    const crdsOf = (manifest: string) => objectsOf(manifest).filter((object) => object.kind === 'CustomResourceDefinition');
    const excluded = crdsOf(await renderBase(workDir, ['--set', 'base.excludedCRDs={gateways.networking.mesh.io,meshoperators.install.mesh.io}']));
    expect(excluded.map((crd) => crd.metadata.name)).toEqual([
      'authorizationpolicies.security.mesh.io',
      'destinationrules.networking.mesh.io',
      'peerauthentications.security.mesh.io',
      'requestauthentications.security.mesh.io',
      'serviceentries.networking.mesh.io',
      'virtualservices.networking.mesh.io',
      'workloadentries.networking.mesh.io',
      'workloadgroups.networking.mesh.io',
    ]);
    const untemplated = crdsOf(await renderBase(workDir, ['--set', 'base.enableCRDTemplates=false']));
    expect(untemplated).toHaveLength(10);
    for (const crd of untemplated) expect(crd.metadata.labels).toEqual({ 'app.kubernetes.io/part-of': 'mesh' });
  });

  test('the webhook configuration calls the default revision’s daemon in the release namespace', async () => {
    const objects = objectsOf(await renderBase(workDir, ['--set', 'defaultRevision=canary'], 'mesh-canary'));
    const validator = objects.find((object) => object.kind === 'ValidatingWebhookConfiguration');
    expect(validator?.metadata.name).toBe('meshd-default-validator');
    const webhooks = validator?.['webhooks'] as { name: string; clientConfig: { service: unknown } }[];
    expect(webhooks.map((webhook) => webhook.name).sort()).toEqual(['rev.validation.mesh.io', 'validation.mesh.io']);
    expect(webhooks[0]?.clientConfig.service).toEqual({ name: 'meshd-canary', namespace: 'mesh-canary', path: '/validate', port: 443 });
    expect(objects.map((object) => object.kind)).not.toContain('ServiceAccount');
  });
});

describe('helm install, upgrade and uninstall against the API server double', () => {
  let kube: ApiServerDouble;
  let kubeconfig: string;
  beforeAll(async () => {
    kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    kubeconfig = join(workDir, 'kubeconfig');
    await kube.writeKubeconfig(kubeconfig);
  });
  afterAll(() => kube?.close());
  const run = (args: string[]) => helm(args, { workDir, kubeconfig, timeoutMs: 120_000 });
  const named = (apiVersion: string, kind: string, name: string) => kube.objects(apiVersion, kind).find((object) => object.metadata?.name === name);
  const servedVersions = (crd: string): string[] =>
    (
      (named('apiextensions.k8s.io/v1', 'CustomResourceDefinition', crd) as { spec?: { versions?: { name: string; served: boolean }[] } } | undefined)?.spec
        ?.versions ?? []
    )
      .filter((version) => version.served)
      .map((version) => version.name);

  /** The chart as an older release shipped it: its VirtualService CRD does not serve v1 yet. */
  function olderBaseChart(): string {
    const chart = join(workDir, 'base-older');
    cpSync(BASE_CHART, chart, { recursive: true });
    const file = join(chart, 'files', 'crd-all.gen.yaml');
    const documents = readFileSync(file, 'utf8')
      .split('\n---\n')
      .map((document) => {
        const crd = parse(document) as { metadata?: { name?: string }; spec: { versions: { name: string }[] } } | null;
        if (crd?.metadata?.name !== 'virtualservices.networking.mesh.io') return document;
        crd.spec.versions = crd.spec.versions.filter((version) => version.name !== 'v1');
        return stringify(crd);
      });
    writeFileSync(file, documents.join('\n---\n'));
    return chart;
  }

  test('install creates the CRDs (established), the ClusterRole with its rules, the binding and the webhook configuration', async () => {
    const result = await run(['install', 'base', olderBaseChart(), '--namespace', 'mesh-system', '--create-namespace', '--set', 'defaultRevision=default']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('ValidatingWebhookConfiguration meshd-default-validator');
    const crds = kube.objects('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
    expect(crds.map((crd) => crd.metadata?.name).sort()).toEqual([
      'authorizationpolicies.security.mesh.io',
      'destinationrules.networking.mesh.io',
      'gateways.networking.mesh.io',
      'meshoperators.install.mesh.io',
      'peerauthentications.security.mesh.io',
      'requestauthentications.security.mesh.io',
      'serviceentries.networking.mesh.io',
      'virtualservices.networking.mesh.io',
      'workloadentries.networking.mesh.io',
      'workloadgroups.networking.mesh.io',
    ]);
    for (const crd of crds) {
      const conditions = (crd as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? [];
      expect(conditions).toContainEqual(expect.objectContaining({ type: 'Established', status: 'True' }));
    }
    const role = named('rbac.authorization.k8s.io/v1', 'ClusterRole', 'meshd-clusterrole-mesh-system') as { rules?: never[] } | undefined;
    expect(role?.rules).toEqual(clusterRoleRules(await renderBase(workDir)));
    expect(allows(role?.rules ?? [], 'patch', 'security.mesh.io', 'peerauthentications/status')).toBe(true);
    const binding = named('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'meshd-clusterrole-mesh-system') as { subjects?: unknown[] } | undefined;
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'meshd', namespace: 'mesh-system' }]);
    expect(named('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'meshd-default-validator')?.metadata?.labels).toEqual(
      expect.objectContaining({ 'mesh.io/rev': 'default', app: 'meshd', release: 'base' }),
    );
  }, 120_000);

  test('upgrade with another value changes the objects: a second service account, no webhook configuration, a newly served version', async () => {
    expect(servedVersions('virtualservices.networking.mesh.io')).toEqual(['v1beta1', 'v1alpha3']);
    const result = await run([
      'upgrade',
      'base',
      BASE_CHART,
      '--namespace',
      'mesh-system',
      '--reuse-values',
      '--set',
      'serviceAccounts={meshd,meshd-canary}',
      '--set',
      'global.configValidation=false',
      '--set',
      'ownerName=upgraded',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const binding = named('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'meshd-clusterrole-mesh-system') as
      { subjects?: { name: string }[] } | undefined;
    expect(binding?.subjects?.map((subject) => subject.name)).toEqual(['meshd', 'meshd-canary']);
    expect(binding && (binding as { metadata?: { labels?: Record<string, string> } }).metadata?.labels?.['install.operator.mesh.io/owning-resource']).toBe(
      'upgraded',
    );
    await waitFor(() => named('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'meshd-default-validator') === undefined, {
      description: 'the webhook configuration pruned',
    });
    // The CRDs are templates: the upgrade brought the version the older release did not serve.
    expect(servedVersions('virtualservices.networking.mesh.io')).toEqual(['v1', 'v1beta1', 'v1alpha3']);
    const target = { kubeconfig, home: workDir };
    const manifest = join(workDir, 'virtual-service-v1.yaml');
    writeFileSync(
      manifest,
      stringify({
        apiVersion: 'networking.mesh.io/v1',
        kind: 'VirtualService',
        metadata: { name: 'reviews', namespace: 'default' },
        spec: { hosts: ['reviews'], http: [{ route: [{ destination: { host: 'reviews' } }] }] },
      }),
    );
    expect((await kubectl(target, ['apply', '-f', manifest])).stdout).toContain('virtualservice.networking.mesh.io/reviews created');
    const readBack = await kubectl(target, [
      'get',
      'virtualservices.v1.networking.mesh.io',
      'reviews',
      '-n',
      'default',
      '-o',
      'jsonpath={.apiVersion} {.spec.hosts}',
    ]);
    expect(readBack.stdout).toBe('networking.mesh.io/v1 ["reviews"]');

    // A ServiceEntry round trip: applied at v1beta1, read back by its short name at the preferred version (v1).
    const serviceEntry = join(workDir, 'service-entry.yaml');
    writeFileSync(
      serviceEntry,
      stringify({
        apiVersion: 'networking.mesh.io/v1beta1',
        kind: 'ServiceEntry',
        metadata: { name: 'external-api', namespace: 'default' },
        spec: { hosts: ['api.example.com'], location: 'MESH_EXTERNAL', resolution: 'DNS', ports: [{ number: 443, name: 'tls', protocol: 'TLS' }] },
      }),
    );
    expect((await kubectl(target, ['apply', '-f', serviceEntry])).stdout).toContain('serviceentry.networking.mesh.io/external-api created');
    const entry = await kubectl(target, [
      'get',
      'se',
      'external-api',
      '-n',
      'default',
      '-o',
      'jsonpath={.apiVersion} {.spec.resolution} {.spec.ports[0].number}',
    ]);
    expect(entry.stdout).toBe('networking.mesh.io/v1 DNS 443');
  }, 120_000);

  test('uninstall (protobuf DeleteOptions) removes the templates’ objects and keeps the CRDs, as helm does', async () => {
    const result = await run(['uninstall', 'base', '--namespace', 'mesh-system']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('release "base" uninstalled');
    await waitFor(() => named('rbac.authorization.k8s.io/v1', 'ClusterRole', 'meshd-clusterrole-mesh-system') === undefined, {
      description: 'the ClusterRole deleted',
    });
    expect(named('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'meshd-clusterrole-mesh-system')).toBeUndefined();
    expect(kube.objects('v1', 'Secret', 'mesh-system').filter((secret) => secret.metadata?.name?.startsWith('sh.helm.release'))).toEqual([]);
    expect(kube.objects('apiextensions.k8s.io/v1', 'CustomResourceDefinition')).toHaveLength(10);
  }, 120_000);
});
