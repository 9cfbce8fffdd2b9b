import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { AuthenticationV1Api } from '@kubernetes/client-node';
import { decodeJwt } from 'jose';
import { AGENT_PATHS } from '../../agent/index.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { ROOT_CERT_CONFIG_MAP as CA_ROOT_CERT_CONFIG_MAP, ROOT_CERT_KEY } from '../../ca/index.js';
import { loadMeshConfig } from '../../crds/mesh-config/index.js';
import { ENTRY_ROOT_CERT_FILE, ENTRY_TOKEN_FILE, ROOT_CERT_CONFIG_MAP, XDS_TOKEN_AUDIENCE } from '../../meshctl/index.js';
import { loadSettings } from '../../runtime/index.js';
import { expectGoldenText } from '../../testing/golden.js';
import { kubectl } from '../../testing/kubectl.js';
import { PROJECT_ROOT, runBin } from '../../testing/run-bin.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';

// x workload entry configure against the API server double, its objects made with the real kubectl.
const GOLDEN = join(PROJECT_ROOT, 'cli', 'testdata', 'workload-entry');
const ROOT_PEM = '-----BEGIN CERTIFICATE-----\nMIIBvTCCAWOgAwIBAgIRAMeshTestRootCertificate0000\n-----END CERTIFICATE-----\n';
const MESH_CONFIG = `trustDomain: vm.example
defaultConfig:
  discoveryAddress: meshd.mesh-system.svc:15012
  proxyMetadata:
    MESH_META_DNS_CAPTURE: "false"
    FROM_ANNOTATION: mesh
    FROM_MESH_CONFIG: kept
`;
const GROUP = `apiVersion: networking.mesh.io/v1
kind: WorkloadGroup
metadata:
  name: ratings
  namespace: vm
  annotations:
    proxy.mesh.io/config: |
      proxyMetadata:
        FROM_ANNOTATION: group
spec:
  metadata:
    labels: {app: ratings, version: v2}
  template:
    ports: {http: 9080, grpc: 9090}
    serviceAccount: ratings-vm
    network: vm-net
  probe:
    periodSeconds: 5
    httpGet: {path: /ready, port: 9080}
`;

let kube: ApiServerDouble;
let dir: string;
const meshctl = (args: readonly string[]) => runMeshctlInProcess(['-c', join(dir, 'kubeconfig'), ...args], { HOME: '/nonexistent' });
const kc = async (args: readonly string[]): Promise<void> => {
  const result = await kubectl({ kubeconfig: join(dir, 'kubeconfig'), home: dir }, args);
  expect(result.stderr).toBe('');
};
const configure = (args: readonly string[]) => meshctl(['x', 'workload', 'entry', 'configure', ...args]);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshctl-workload-entry-'));
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
  writeFileSync(join(dir, 'mesh'), MESH_CONFIG);
  writeFileSync(join(dir, 'root-cert.pem'), ROOT_PEM);
  writeFileSync(join(dir, 'group.yaml'), GROUP);
  writeFileSync(
    join(dir, 'gateway.yaml'),
    'apiVersion: v1\nkind: Service\nmetadata: {name: mesh-eastwestgateway, namespace: mesh-system}\nspec:\n  ports: [{name: tls, port: 15012}]\n  externalIPs: [203.0.113.10]\n',
  );
  await kc(['apply', '-f', join(PROJECT_ROOT, 'crds', 'generated', 'crds.yaml')]);
  for (const namespace of ['mesh-system', 'vm', 'bare']) await kc(['create', 'namespace', namespace]);
  await kc(['create', 'configmap', 'mesh', '-n', 'mesh-system', `--from-file=mesh=${join(dir, 'mesh')}`]);
  await kc(['create', 'configmap', 'mesh-canary', '-n', 'mesh-system', '--from-literal=mesh=defaultConfig: {statusPort: 15030}']);
  await kc(['create', 'configmap', ROOT_CERT_CONFIG_MAP, '-n', 'vm', `--from-file=root-cert.pem=${join(dir, 'root-cert.pem')}`]);
  await kc(['create', 'serviceaccount', 'ratings-vm', '-n', 'vm']);
  await kc(['apply', '-f', join(dir, 'gateway.yaml')]);
  await kc(['apply', '-f', join(dir, 'group.yaml')]);
}, 60_000);

afterAll(async () => {
  await kube?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The files of an output folder but the token, against `cli/testdata/workload-entry/<name>/`. */
function expectGoldenFolder(output: string, name: string): void {
  const files = readdirSync(output).filter((file) => file !== ENTRY_TOKEN_FILE);
  for (const file of files) expectGoldenText(join(GOLDEN, name, `${file}.golden`), readFileSync(join(output, file), 'utf8'));
  expect(files.sort()).toEqual(
    readdirSync(join(GOLDEN, name))
      .map((file) => file.replace(/\.golden$/, ''))
      .sort(),
  );
}

/** The token is a TokenRequest token of the template's service account the CA's review accepts, lasting `seconds`. */
async function expectReviewedToken(output: string, seconds: number): Promise<void> {
  const token = readFileSync(join(output, ENTRY_TOKEN_FILE), 'utf8');
  expect(statSync(join(output, ENTRY_TOKEN_FILE)).mode & 0o777).toBe(0o600);
  const review = await kube
    .kubeConfig()
    .makeApiClient(AuthenticationV1Api)
    .createTokenReview({ body: { spec: { token, audiences: [XDS_TOKEN_AUDIENCE] } } });
  expect(review.status).toMatchObject({ authenticated: true, user: { username: 'system:serviceaccount:vm:ratings-vm' }, audiences: [XDS_TOKEN_AUDIENCE] });
  const claims = decodeJwt(token);
  expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(seconds);
}

/** The environment an agent started after `set -a; . cluster.env; . sidecar.env` sees. */
async function sourcedEnv(output: string): Promise<Record<string, string>> {
  const files = ['cluster.env', 'sidecar.env'].filter((file) => existsSync(join(output, file)));
  const script = `set -a; ${files.map((file) => `. ./${file};`).join(' ')} env -0`;
  const { stdout } = await promisify(execFile)('bash', ['-c', script], { cwd: output, env: {} });
  return Object.fromEntries(
    stdout.split('\0').flatMap((line) => (line.includes('=') ? [[line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]] : [])),
  );
}

describe('meshctl x workload entry configure', () => {
  test('the names it writes are the ones the agent and the CA read', () => {
    expect(ENTRY_TOKEN_FILE).toBe(basename(AGENT_PATHS.token));
    expect(ENTRY_ROOT_CERT_FILE).toBe(basename(AGENT_PATHS.meshRoot));
    expect(ENTRY_ROOT_CERT_FILE).toBe(ROOT_CERT_KEY);
    expect(ROOT_CERT_CONFIG_MAP).toBe(CA_ROOT_CERT_CONFIG_MAP);
    expect(loadSettings('pilot-discovery', {}).get('TOKEN_AUDIENCES').split(',')).toContain(XDS_TOKEN_AUDIENCE);
  });

  test('from a file: every file, the ingress address from the east-west gateway, a reviewed token', async () => {
    const output = join(dir, 'from-file');
    const result = await configure(['-f', join(dir, 'group.yaml'), '-o', output, '--autoregister', '--workloadIP', '10.0.0.5']);
    expect(result.stdout).toBe(`Configuration generation into directory ${output} was successful\n`);
    expect(result.stderr).toBe(
      `Warning: a security token for namespace "vm" and service account "ratings-vm" has been generated and stored at "${join(output, ENTRY_TOKEN_FILE)}"\n`,
    );
    expect(result.code).toBe(0);
    expectGoldenFolder(output, 'from-file');
    await expectReviewedToken(output, 3600);

    // What the agent reads of it: its settings from the sourced files, its proxy config from mesh.yaml (its --meshConfig).
    const settings = loadSettings('pilot-agent', await sourcedEnv(output));
    expect({
      namespace: settings.get('POD_NAMESPACE'),
      serviceAccount: settings.get('SERVICE_ACCOUNT'),
      trustDomain: settings.get('TRUST_DOMAIN'),
      instanceIp: settings.get('INSTANCE_IP'),
      clusterId: settings.get('MESH_META_CLUSTER_ID'),
      dnsCapture: settings.get('MESH_META_DNS_CAPTURE'),
    }).toEqual({ namespace: 'vm', serviceAccount: 'ratings-vm', trustDomain: 'vm.example', instanceIp: '10.0.0.5', clusterId: 'Kubernetes', dnsCapture: true });
    expect(settings.prefixed('MESH_META_')).toMatchObject({ AUTO_REGISTER_GROUP: 'ratings', WORKLOAD_NAME: 'ratings', NETWORK: 'vm-net' });
    const proxyConfig = loadMeshConfig({ file: join(output, 'mesh.yaml') }).defaultConfig;
    expect(proxyConfig.readinessProbe).toEqual({ periodSeconds: 5, httpGet: { path: '/ready', port: 9080 } });
    expect(proxyConfig.discoveryAddress).toBe('meshd.mesh-system.svc:15012');
  });

  test('from the API server, for a revision, with the flags set', async () => {
    const output = join(dir, 'from-cluster');
    const result = await configure([
      '--name',
      'ratings',
      '-n',
      'vm',
      '-o',
      output,
      '-r',
      'canary',
      '--capture-dns=false',
      '--clusterID',
      'east',
      '--ingressIP',
      '192.0.2.7',
      '--tokenDuration',
      '7200',
    ]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: `Configuration generation into directory ${output} was successful\n` });
    expectGoldenFolder(output, 'from-cluster');
    await expectReviewedToken(output, 7200);
  });

  test('no ingress address found: hosts is empty, with a warning naming --ingressIP', async () => {
    const output = join(dir, 'no-ingress');
    const result = await configure(['-f', join(dir, 'group.yaml'), '-o', output, '--ingressService', 'missing.mesh-system']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Warning: could not auto-detect the ingress address for meshd.mesh-system.svc: use --ingressIP');
    expect(readFileSync(join(output, 'hosts'), 'utf8')).toBe('');
  });

  test.each([
    ['no group', ['-o', 'x'], 'expecting a WorkloadGroup artifact file (-f) or the name (--name) and namespace (-n) of an existing WorkloadGroup'],
    ['a name without a namespace', ['--name', 'ratings', '-o', 'x'], 'expecting a WorkloadGroup artifact file (-f)'],
    ['no output folder', ['--name', 'ratings', '-n', 'vm'], 'expecting an output directory (-o)'],
    ['an ingress IP that is none', ['--name', 'ratings', '-n', 'vm', '-o', 'x', '--ingressIP', 'gateway'], '--ingressIP "gateway": expected an IP address'],
    ['a workload IP that is none', ['--name', 'ratings', '-n', 'vm', '-o', 'x', '--workloadIP', '10.0.0'], '--workloadIP "10.0.0": expected an IP address'],
    [
      'a token duration that is no number',
      ['--name', 'ratings', '-n', 'vm', '-o', 'x', '--tokenDuration', '1h'],
      "option '--tokenDuration <int>' argument '1h' is invalid",
    ],
    [
      'a token duration of zero',
      ['--name', 'ratings', '-n', 'vm', '-o', 'x', '--tokenDuration', '0'],
      '--tokenDuration 0: expected a positive number of seconds',
    ],
    ['an unknown group', ['--name', 'nope', '-n', 'vm'], 'workloadgroup nope not found in namespace vm'],
    ['an unknown revision', ['--name', 'ratings', '-n', 'vm', '-r', 'nope'], 'configmap mesh-nope was not found in namespace mesh-system'],
    ['a group where no root certificate is published', ['-f', 'bare.yaml'], 'configmap mesh-ca-root-cert was not found in namespace bare'],
    ['a service account that does not exist', ['-f', 'nobody.yaml'], 'could not create a token under service account nobody in namespace vm'],
    ['a file that is no WorkloadGroup', ['-f', 'entry.yaml'], 'kind: expected WorkloadGroup, got "WorkloadEntry"'],
    ['a file with a bad port', ['-f', 'bad-port.yaml'], 'spec.template.ports.http'],
    ['a proxy config annotation that is none', ['-f', 'bad-annotation.yaml'], 'annotation proxy.mesh.io/config of WorkloadGroup vm/ratings: concurrency'],
    ['a file without a namespace', ['-f', 'no-namespace.yaml'], "metadata.namespace: expecting the WorkloadGroup's namespace (or --namespace)"],
  ])('%s: refused, naming it, and nothing is written', async (_case, args, message) => {
    const inputs: Record<string, string> = {
      'bare.yaml': 'kind: WorkloadGroup\nmetadata: {name: ratings, namespace: bare}\nspec: {template: {serviceAccount: default}}\n',
      'nobody.yaml': 'kind: WorkloadGroup\nmetadata: {name: ratings, namespace: vm}\nspec: {template: {serviceAccount: nobody}}\n',
      'entry.yaml': 'kind: WorkloadEntry\nmetadata: {name: ratings, namespace: vm}\nspec: {}\n',
      'bad-port.yaml': 'kind: WorkloadGroup\nmetadata: {name: ratings, namespace: vm}\nspec: {template: {ports: {http: web}}}\n',
      'bad-annotation.yaml':
        'kind: WorkloadGroup\nmetadata: {name: ratings, namespace: vm, annotations: {proxy.mesh.io/config: "concurrency: many"}}\nspec: {template: {serviceAccount: ratings-vm}}\n',
      'no-namespace.yaml': 'kind: WorkloadGroup\nmetadata: {name: ratings}\nspec: {}\n',
    };
    const output = join(dir, `refused-${_case.replaceAll(' ', '-')}`);
    const resolved = args.map((arg) => (arg in inputs ? join(dir, arg) : arg === 'x' ? output : arg));
    for (const [file, text] of Object.entries(inputs)) writeFileSync(join(dir, file), text);
    const result = await configure(resolved.includes('-o') || _case === 'no output folder' ? resolved : [...resolved, '-o', output]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
    expect(existsSync(output)).toBe(false);
  });

  test('the built CLI refuses as the in-process one does, with a usage exit code', async () => {
    const result = await runBin('meshctl', ['x', 'workload', 'entry', 'configure', '-f', 'group.yaml'], { env: { HOME: '/nonexistent' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('expecting an output directory (-o)');
  });
});
