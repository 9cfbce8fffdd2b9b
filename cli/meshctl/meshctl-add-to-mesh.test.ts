import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { validateResource } from '../../crds/index.js';
import { kubectl } from '../../testing/kubectl.js';
import { PROJECT_ROOT } from '../../testing/run-bin.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';

// x add-to-mesh external-service and x remove-from-mesh external-service against the API server
// double, the objects read back with the real kubectl.
let kube: ApiServerDouble;
let dir: string;
const meshctl = (args: readonly string[]) => runMeshctlInProcess(['-c', join(dir, 'kubeconfig'), ...args], { HOME: '/nonexistent' });
const get = async (args: readonly string[]): Promise<{ stdout: string; stderr: string }> => kubectl({ kubeconfig: join(dir, 'kubeconfig'), home: dir }, args);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshctl-add-to-mesh-'));
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
  expect((await get(['apply', '-f', join(PROJECT_ROOT, 'crds', 'generated', 'crds.yaml')])).stderr).toBe('');
  expect((await get(['create', 'namespace', 'vm'])).stderr).toBe('');
}, 60_000);

afterAll(async () => {
  await kube?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('meshctl x add-to-mesh external-service', () => {
  test.each([
    ['too few arguments', ['vmhttp', '10.0.0.1'], 'provide service name, IP and Port List'],
    ['a port without its protocol', ['vmhttp', '10.0.0.1', '9080'], 'protocol 9080 is not supported by the mesh'],
    ['an unknown protocol', ['vmhttp', '10.0.0.1', 'smtp:25'], 'protocol smtp is not supported by the mesh'],
    ['a port that is no number', ['vmhttp', '10.0.0.1', 'http:80a'], 'invalid port format http:80a'],
  ])('%s: refused before anything is written', async (_case, args, message) => {
    const result = await meshctl(['x', 'add-to-mesh', 'external-service', '-n', 'vm', ...args]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(message);
    expect((await get(['get', 'services,serviceentries', '-n', 'vm', '-o', 'name'])).stdout).toBe('');
  });

  test('creates the ServiceEntry and the selector-less Service, as the reference does; a second time is refused', async () => {
    const result = await meshctl([
      'x',
      'add',
      'es',
      '-n',
      'vm',
      'vmhttp',
      '10.9.0.1,10.9.0.2',
      'http:9080',
      'TCP:8888',
      '-l',
      'app=vmhttp,version=v1',
      '-a',
      'env=stage',
      '-s',
      'stage-admin',
    ]);
    expect(result).toEqual({
      code: 0,
      stdout:
        'ServiceEntry "mesh-expansion-vmhttp.vm" has been created in the mesh for the external service "vmhttp"\n' +
        'Kubernetes Service "vmhttp.vm" has been created in the mesh for the external service "vmhttp"\n',
      stderr: '',
    });
    const entry = JSON.parse((await get(['get', 'serviceentry', 'mesh-expansion-vmhttp', '-n', 'vm', '-o', 'json'])).stdout) as { spec: unknown };
    expect(entry.spec).toEqual({
      hosts: ['vmhttp.vm.svc.cluster.local'],
      ports: [
        { number: 9080, protocol: 'HTTP', name: 'http-9080' },
        // The reference writes `TCP-8888`, which validation refuses: the name is lowered, as its Service's is.
        { number: 8888, protocol: 'TCP', name: 'tcp-8888' },
      ],
      endpoints: [
        { address: '10.9.0.1', labels: { app: 'vmhttp', version: 'v1' } },
        { address: '10.9.0.2', labels: { app: 'vmhttp', version: 'v1' } },
      ],
      location: 'MESH_INTERNAL',
      resolution: 'STATIC',
    });
    expect(validateResource(entry).errors).toEqual([]);
    const service = JSON.parse((await get(['get', 'service', 'vmhttp', '-n', 'vm', '-o', 'json'])).stdout) as {
      metadata: { labels: unknown; annotations: unknown };
      spec: { selector?: unknown; ports: { name: string; port: number }[] };
    };
    expect(service.metadata.labels).toEqual({ app: 'vmhttp', version: 'v1' });
    expect(service.metadata.annotations).toEqual({ env: 'stage', 'kubernetes.io/service-account.name': 'stage-admin' });
    expect(service.spec.selector).toBeUndefined();
    expect(service.spec.ports.map(({ name, port }) => ({ name, port }))).toEqual([
      { name: 'http-9080', port: 9080 },
      { name: 'tcp-8888', port: 8888 },
    ]);

    const again = await meshctl(['x', 'add-to-mesh', 'external-service', '-n', 'vm', 'vmhttp', '10.9.0.3', 'http:9080']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('service "vmhttp" already exists, skip');
  });

  test('remove-from-mesh deletes both, Service first; a second time names what is missing', async () => {
    expect(await meshctl(['x', 'rm', 'es', '-n', 'vm', 'vmhttp'])).toEqual({
      code: 0,
      stdout:
        'Kubernetes Service "vmhttp.vm" has been deleted for external service "vmhttp"\n' +
        'Service Entry "mesh-expansion-vmhttp" has been deleted for external service "vmhttp"\n',
      stderr: '',
    });
    expect((await get(['get', 'services,serviceentries', '-n', 'vm', '-o', 'name'])).stdout).toBe('');
    const again = await meshctl(['x', 'remove-from-mesh', 'external-service', '-n', 'vm', 'vmhttp']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('service "vmhttp" does not exist, skip');
  });
});
