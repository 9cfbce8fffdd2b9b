import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { BUILTIN_INJECTOR_CONFIG } from '../../webhook/inject/index.js';
import { kubectl } from '../../testing/kubectl.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';

// x add-to-mesh deployment|service and x remove-from-mesh deployment|service against the API
// server double (which runs no controllers: the Deployments are the objects written), read back
// with the real kubectl. The tests run in order on the same Deployments.
let kube: ApiServerDouble;
let dir: string;
const meshctl = (args: readonly string[]) => runMeshctlInProcess(['-c', join(dir, 'kubeconfig'), ...args], { HOME: '/nonexistent' });
const get = async (args: readonly string[]) => kubectl({ kubeconfig: join(dir, 'kubeconfig'), home: dir }, args);

interface Container {
  name: string;
  image: string;
}
interface Template {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { containers: Container[]; initContainers?: Container[]; volumes?: { name: string }[] };
}
const template = async (name: string): Promise<Template> =>
  (JSON.parse((await get(['get', 'deployment', name, '-n', 'shop', '-o', 'json'])).stdout) as { spec: { template: Template } }).spec.template;
const names = (list: { name: string }[] | undefined) => (list ?? []).map((item) => item.name);
const optedOut = (original: Template): Template => ({
  ...original,
  metadata: { ...original.metadata, annotations: { ...original.metadata.annotations, 'sidecar.mesh.io/inject': 'false' } },
});

const deployment = (name: string, labels: Record<string, string>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'shop' },
  spec: {
    selector: { matchLabels: labels },
    template: {
      metadata: { labels, annotations: { team: 'shop' } },
      spec: {
        containers: [{ name: 'app', image: 'example/app:1', ports: [{ containerPort: 9080 }], readinessProbe: { httpGet: { path: '/ready', port: 9080 } } }],
      },
    },
  },
});
const service = (name: string, selector?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'shop' },
  spec: { ...(selector ? { selector } : {}), ports: [{ name: 'http', port: 9080 }] },
});
const injectorConfigMap = (name: string, hub: string) => {
  const values = JSON.parse(BUILTIN_INJECTOR_CONFIG.values) as { global: { hub: string } };
  values.global.hub = hub;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'mesh-system' },
    data: { config: BUILTIN_INJECTOR_CONFIG.config, values: JSON.stringify(values) },
  };
};
const meshConfigMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'mesh-system' }, data: { mesh: '{}' } });

const added = (name: string) =>
  `deployment ${name}.shop updated successfully with mesh sidecar injected.\nNext Step: Add related labels to the deployment to align with the mesh's requirement: https://mesh.io/latest/docs/ops/deployment/requirements/\n`;
const removed = (name: string) => `deployment "${name}.shop" updated successfully with mesh sidecar un-injected.\n`;
let originals: Record<string, Template>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshctl-add-to-mesh-workloads-'));
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'mesh-system' } },
    injectorConfigMap('mesh-sidecar-injector', 'registry.example.com/default'),
    injectorConfigMap('mesh-sidecar-injector-canary', 'registry.example.com/canary'),
    meshConfigMap('mesh'),
    meshConfigMap('mesh-canary'),
    deployment('ratings-v1', { app: 'ratings', version: 'v1' }),
    deployment('reviews-v1', { app: 'reviews', version: 'v1' }),
    deployment('reviews-v2', { app: 'reviews', version: 'v2' }),
    service('reviews', { app: 'reviews' }),
    service('reviews-v2', { app: 'reviews', version: 'v2' }),
    service('lonely', { app: 'lonely' }),
    service('external'),
  ];
  writeFileSync(join(dir, 'objects.yaml'), objects.map((object) => stringify(object)).join('---\n'));
  expect((await get(['apply', '-f', join(dir, 'objects.yaml')])).stderr).toBe('');
  originals = Object.fromEntries(await Promise.all(['ratings-v1', 'reviews-v1', 'reviews-v2'].map(async (name) => [name, await template(name)])));
}, 60_000);

afterAll(async () => {
  await kube?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('meshctl x add-to-mesh deployment and x remove-from-mesh deployment', () => {
  test('add injects the pod template from the injector ConfigMap and updates the Deployment', async () => {
    expect(await meshctl(['x', 'add-to-mesh', 'deployment', 'ratings-v1', '-n', 'shop'])).toEqual({ code: 0, stdout: added('ratings-v1'), stderr: '' });
    const injected = await template('ratings-v1');
    expect(names(injected.spec.containers)).toEqual(['app', 'mesh-proxy']);
    expect(names(injected.spec.initContainers)).toEqual(['mesh-init']);
    expect(injected.spec.containers[1]?.image).toBe('registry.example.com/default/proxyv2:latest');
    expect(JSON.parse(injected.metadata.annotations?.['sidecar.mesh.io/status'] ?? '{}')).toMatchObject({
      containers: ['mesh-proxy'],
      initContainers: ['mesh-init'],
    });
    expect(names(injected.spec.volumes).length).toBeGreaterThan(0);
  });

  test('add again leaves the injected template alone, saying why, as the reference does', async () => {
    const before = await template('ratings-v1');
    expect(await meshctl(['x', 'add', 'dep', 'ratings-v1', '-n', 'shop'])).toEqual({
      code: 0,
      stdout: added('ratings-v1'),
      stderr: '===> Skipping injection because "shop/ratings-v1" has injected "mesh-proxy" sidecar already\n',
    });
    expect(await template('ratings-v1')).toEqual(before);
  });

  test('remove restores the template exactly, marked not to be injected again by the namespace', async () => {
    expect(await meshctl(['x', 'remove-from-mesh', 'deployment', 'ratings-v1', '-n', 'shop'])).toEqual({ code: 0, stdout: removed('ratings-v1'), stderr: '' });
    expect(await template('ratings-v1')).toEqual(optedOut(originals['ratings-v1'] as Template));
    expect(await meshctl(['x', 'rm', 'deploy', 'ratings-v1', '-n', 'shop'])).toEqual({
      code: 0,
      stdout: 'deployment "ratings-v1.shop" has no mesh sidecar injected. Skipping.\n',
      stderr: '',
    });
  });

  test('add after remove injects again (the mark is overridden), and remove gives the same template', async () => {
    expect((await meshctl(['x', 'add', 'deploy', 'ratings-v1', '-n', 'shop'])).stdout).toBe(added('ratings-v1'));
    const injected = await template('ratings-v1');
    expect(names(injected.spec.containers)).toEqual(['app', 'mesh-proxy']);
    expect(injected.metadata.annotations?.['sidecar.mesh.io/inject']).toBeUndefined();
    expect((await meshctl(['x', 'rm', 'dep', 'ratings-v1', '-n', 'shop'])).stdout).toBe(removed('ratings-v1'));
    expect(await template('ratings-v1')).toEqual(optedOut(originals['ratings-v1'] as Template));
  });
});

describe('meshctl x add-to-mesh service and x remove-from-mesh service', () => {
  test('add injects every Deployment the Service selects, with the revision’s injector', async () => {
    expect(await meshctl(['x', 'add', 'svc', 'reviews', '-n', 'shop', '-r', 'canary'])).toEqual({
      code: 0,
      stdout: added('reviews-v1') + added('reviews-v2'),
      stderr: '',
    });
    for (const name of ['reviews-v1', 'reviews-v2']) {
      const injected = await template(name);
      expect(names(injected.spec.containers)).toEqual(['app', 'mesh-proxy']);
      expect(injected.spec.containers[1]?.image).toBe('registry.example.com/canary/proxyv2:latest');
      expect(JSON.parse(injected.metadata.annotations?.['sidecar.mesh.io/status'] ?? '{}')).toMatchObject({ revision: 'canary' });
    }
    expect(await template('ratings-v1')).toEqual(optedOut(originals['ratings-v1'] as Template));
  });

  test('remove restores both', async () => {
    expect(await meshctl(['x', 'rm', 'service', 'reviews', '-n', 'shop'])).toEqual({
      code: 0,
      stdout: removed('reviews-v1') + removed('reviews-v2'),
      stderr: '',
    });
    for (const name of ['reviews-v1', 'reviews-v2']) expect(await template(name)).toEqual(optedOut(originals[name] as Template));
  });

  test('a Deployment is the Service’s when its selector has every pair of the Service’s', async () => {
    expect(await meshctl(['x', 'add', 'svc', 'reviews-v2', '-n', 'shop'])).toEqual({ code: 0, stdout: added('reviews-v2'), stderr: '' });
    expect(await template('reviews-v1')).toEqual(optedOut(originals['reviews-v1'] as Template));
    expect(names((await template('reviews-v2')).spec.containers)).toEqual(['app', 'mesh-proxy']);
  });

  test('the Inject group’s files, given after the subcommand, render instead of the ConfigMaps', async () => {
    const values = JSON.parse(BUILTIN_INJECTOR_CONFIG.values) as { global: { hub: string } };
    values.global.hub = 'registry.example.com/offline';
    writeFileSync(join(dir, 'values.json'), JSON.stringify(values));
    writeFileSync(join(dir, 'inject-config.yaml'), BUILTIN_INJECTOR_CONFIG.config);
    writeFileSync(join(dir, 'mesh.yaml'), 'trustDomain: offline.example\n');
    const files = ['--injectConfigFile', join(dir, 'inject-config.yaml'), '--valuesFile', join(dir, 'values.json'), '--meshConfigFile', join(dir, 'mesh.yaml')];
    expect(await meshctl(['x', 'add', 'dep', 'reviews-v1', '-n', 'shop', ...files])).toEqual({ code: 0, stdout: added('reviews-v1'), stderr: '' });
    const proxy = (await template('reviews-v1')).spec.containers[1] as Container & { env: { name: string; value?: string }[] };
    expect(proxy.image).toBe('registry.example.com/offline/proxyv2:latest');
    expect(proxy.env.find((env) => env.name === 'TRUST_DOMAIN')?.value).toBe('offline.example');
  });

  test('a refused update fails the command, after trying every Deployment', async () => {
    const before = await Promise.all(['reviews-v1', 'reviews-v2'].map(template));
    kube.faults.denyAccess([{ verb: 'update', group: 'apps', resource: 'deployments' }]);
    try {
      const result = await meshctl(['x', 'rm', 'svc', 'reviews', '-n', 'shop']);
      expect([result.code, result.stdout]).toEqual([1, '']);
      const lines = result.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^Error: failed to update deployment "reviews-v1.shop" for service "reviews.shop" due to .*forbidden/);
      expect(lines[1]).toMatch(/^failed to update deployment "reviews-v2.shop" for service "reviews.shop" due to .*forbidden/);
    } finally {
      kube.faults.denyAccess([]);
    }
    expect(await Promise.all(['reviews-v1', 'reviews-v2'].map(template))).toEqual(before);
  });

  test.each([
    ['add', 'lonely'],
    ['add', 'external'],
    ['rm', 'lonely'],
  ])('%s: a Service selecting no Deployment (%s) is said, not an error', async (verb, name) => {
    expect(await meshctl(['x', verb, 'svc', name, '-n', 'shop'])).toEqual({ code: 0, stdout: `No deployments found for service ${name}.shop\n`, stderr: '' });
  });
});

describe('refusals', () => {
  test.each([
    ['an unknown deployment', ['x', 'add', 'deployment', 'nope', '-n', 'shop'], 1, 'Error: deployment "nope" does not exist\n'],
    ['an unknown service', ['x', 'add', 'service', 'nope', '-n', 'shop'], 1, 'Error: services "nope" not found\n'],
    ['an unknown deployment to remove', ['x', 'rm', 'deployment', 'nope', '-n', 'shop'], 1, 'Error: deployment "nope" does not exist\n'],
    ['an unknown service to remove', ['x', 'rm', 'service', 'nope', '-n', 'shop'], 1, 'Error: service "nope" does not exist, skip\n'],
    [
      'the cluster’s namespace',
      ['x', 'rm', 'dep', 'coredns', '-n', 'kube-system'],
      1,
      'Error: namespace kube-system is a system namespace and has no mesh sidecar injected\n',
    ],
    [
      'the mesh’s namespace',
      ['x', 'rm', 'svc', 'meshd', '-n', 'mesh-system'],
      1,
      'Error: namespace mesh-system is a system namespace and has no mesh sidecar injected\n',
    ],
    ['no name', ['x', 'add', 'deployment'], 2, 'Error: expecting deployment name\n'],
    [
      'both injector sources',
      ['x', 'add', 'deployment', 'ratings-v1', '--injectConfigFile', '/nonexistent', '--injectConfigMapName', 'x'],
      2,
      'Error: --injectConfigFile and --injectConfigMapName cannot be used together\n',
    ],
  ])('%s', async (_case, args, code, stderr) => {
    expect(await meshctl(args)).toEqual({ code, stdout: '', stderr });
  });
});
