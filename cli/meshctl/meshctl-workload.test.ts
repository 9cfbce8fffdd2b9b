import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';
import { validateResource } from '../../crds/index.js';
import { runBin } from '../../testing/run-bin.js';

const meshctl = (args: readonly string[]) => runMeshctlInProcess(args, { HOME: '/nonexistent' });

const MINIMAL = `apiVersion: networking.mesh.io/v1alpha3
kind: WorkloadGroup
metadata:
  name: ratings
  namespace: shop
spec:
  metadata:
    annotations: {}
    labels: {}
  template:
    ports: {}
    serviceAccount: default
`;

const FULL = `apiVersion: networking.mesh.io/v1alpha3
kind: WorkloadGroup
metadata:
  name: ratings
  namespace: shop
spec:
  metadata:
    annotations:
      owner: team-a
    labels:
      app: ratings
      version: v1
  template:
    ports:
      grpc: 9090
      http: 8080
    serviceAccount: ratings-vm
`;

describe('meshctl x workload group create', () => {
  test.each([
    ['no flags', [], 'expecting a workload name'],
    ['a namespace only', ['-n', 'shop'], 'expecting a workload name'],
    ['a name only', ['--name', 'ratings'], 'expecting a workload namespace'],
  ])('%s: refused, naming what is missing', async (_case, flags, message) => {
    const result = await meshctl(['x', 'workload', 'group', 'create', ...flags]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });

  test('the defaults: empty maps written {}, service account default', async () => {
    expect(await meshctl(['x', 'workload', 'group', 'create', '--name', 'ratings', '--namespace', 'shop'])).toEqual({ code: 0, stdout: MINIMAL, stderr: '' });
  });

  test('every flag, long and short forms alike, sorted; the output is a valid WorkloadGroup', async () => {
    const long = [
      '--labels',
      'version=v1,app=ratings',
      '--annotations',
      'owner=team-a',
      '--ports',
      'http=8080',
      '--ports',
      'grpc=9090',
      '--serviceAccount',
      'ratings-vm',
    ];
    const short = ['-l', 'version=v1', '-l', 'app=ratings', '-a', 'owner=team-a', '-p', 'http=8080,grpc=9090', '-s', 'ratings-vm'];
    for (const flags of [long, short]) {
      expect(await meshctl(['x', 'workload', 'group', 'create', '--name', 'ratings', '-n', 'shop', ...flags])).toEqual({ code: 0, stdout: FULL, stderr: '' });
    }
    expect(validateResource(parse(FULL) as object).errors).toEqual([]);
  });

  test('a port that is no number is refused, naming the flag and the item', async () => {
    const result = await meshctl(['x', 'workload', 'group', 'create', '--name', 'ratings', '-n', 'shop', '-p', 'http=80a']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('invalid --ports item "http=80a": expected <name>=<port number>');
  });

  test('the built CLI prints the same', async () => {
    const result = await runBin('meshctl', ['x', 'workload', 'group', 'create', '--name', 'ratings', '--namespace', 'shop'], { env: { HOME: '/nonexistent' } });
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: MINIMAL });
  });
});
