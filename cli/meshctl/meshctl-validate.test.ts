import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { parse } from 'yaml';
import { newMeshctlValidateCommand } from './meshctl-validate.js';
import { runProgram, type CliIo } from '../run-cli.js';

const corpusDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'crds', 'testdata', 'corpus');

type Issue = { path: string; message: string };
type Expected = { servicePorts?: number[]; errors?: Issue[]; warnings?: Issue[] };
type Case = { label: string; file: string; expected: Expected };

function corpus(prefix: 'valid-' | 'invalid-'): Case[] {
  const cases: Case[] = [];
  for (const dir of readdirSync(corpusDir).sort()) {
    for (const name of readdirSync(join(corpusDir, dir)).sort()) {
      if (!name.startsWith(prefix) || !name.endsWith('.yaml') || name.endsWith('.expected.yaml')) continue;
      const sidecar = join(corpusDir, dir, name.replace(/\.yaml$/, '.expected.yaml'));
      const expected = existsSync(sidecar) ? ((parse(readFileSync(sidecar, 'utf8')) as Expected | null) ?? {}) : {};
      cases.push({ label: `${dir}/${name}`, file: join(corpusDir, dir, name), expected });
    }
  }
  return cases;
}

interface Outcome {
  code: number;
  out: string;
  err: string;
  errLines: string[];
}

async function validate(args: string[], stdin = ''): Promise<Outcome> {
  let out = '';
  let err = '';
  const io: CliIo = { stdout: (text) => (out += text), stderr: (text) => (err += text) };
  const program = new Command('meshctl').addCommand(newMeshctlValidateCommand(io, { readStdin: async () => stdin }));
  const code = await runProgram(program, args, io);
  return { code, out, err, errLines: err.split('\n').filter((line) => line !== '') };
}

/** The line a finding prints as, whatever the resource is called. */
function findingLine(severity: 'Error' | 'Warning', file: string, issue: Issue): RegExp {
  const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const tail = issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
  return new RegExp(`^${severity}: ${escape(file)}: [A-Za-z()]+[^:]* [^:]+: ${escape(tail)}$`);
}

function expectLine(lines: string[], pattern: RegExp): void {
  if (!lines.some((line) => pattern.test(line))) throw new Error(`no line matches ${pattern}:\n${lines.join('\n')}`);
}

let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'meshctl-validate-'));
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

async function scratch(name: string, text: string): Promise<string> {
  const path = join(work, name);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  return path;
}

describe('meshctl validate over the policy corpus', () => {
  test.each(corpus('valid-').map((c) => [c.label, c] as const))('%s is valid', async (_label, c) => {
    const result = await validate(['validate', '--referential=false', '-f', c.file]);
    expect(result.code).toBe(0);
    expect(result.out).toBe(`${JSON.stringify(c.file)} is valid\n`);
    expect(result.errLines.filter((line) => line.startsWith('Error'))).toEqual([]);
    // Port-level warnings need the cluster's services, which an offline check does not have.
    if (c.expected.servicePorts === undefined) {
      for (const warning of c.expected.warnings ?? []) expectLine(result.errLines, findingLine('Warning', c.file, warning));
      expect(result.errLines).toHaveLength((c.expected.warnings ?? []).length);
    }
  });

  test.each(corpus('invalid-').map((c) => [c.label, c] as const))('%s is not', async (_label, c) => {
    const result = await validate(['validate', '-f', c.file]);
    expect(result.code).toBe(1);
    expect(result.out).toBe('');
    const errors = c.expected.errors ?? [];
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) expectLine(result.errLines, findingLine('Error', c.file, error));
    expect(result.errLines.at(-1)).toBe(`Error: validation failed: ${errors.length} error${errors.length === 1 ? '' : 's'} in 1 of 1 input`);
  });

  test('the whole valid corpus at once, with the reference checks on, is valid', async () => {
    const files = corpus('valid-').map((c) => c.file);
    const result = await validate(['validate', '-f', files.join(',')]);
    expect(result.code).toBe(0);
    expect(result.out).toBe(files.map((file) => `${JSON.stringify(file)} is valid\n`).join(''));
    expect(result.errLines.every((line) => line.startsWith('Warning: '))).toBe(true);
  });

  test('a finding names the file, the kind, the namespace and name, the field and the problem', async () => {
    const file = join(corpusDir, 'authorization-policy', 'invalid-action.yaml');
    const result = await validate(['validate', '-f', file]);
    expect(result.errLines).toEqual([
      `Error: ${file}: AuthorizationPolicy foo/reject: spec.action: expected one of ALLOW, DENY, AUDIT, CUSTOM, got "REJECT"`,
      'Error: validation failed: 1 error in 1 of 1 input',
    ]);
  });

  test('several files at once: each valid one is reported, the run fails for the others', async () => {
    const valid = join(corpusDir, 'gateway', 'valid-ingress-http.yaml');
    const invalid = join(corpusDir, 'gateway', 'invalid-protocol.yaml');
    const alsoValid = join(corpusDir, 'peer-authentication', 'valid-mesh-wide-strict.yaml');
    const result = await validate(['v', '-x=false', '-f', `${valid},${invalid}`, '--filename', alsoValid]);
    expect(result.code).toBe(1);
    expect(result.out).toBe(`${JSON.stringify(valid)} is valid\n${JSON.stringify(alsoValid)} is valid\n`);
    expect(result.errLines.every((line) => line.startsWith(`Error: ${invalid}: `) || line.startsWith('Error: validation failed:'))).toBe(true);
    expect(result.errLines.at(-1)).toMatch(/ in 1 of 3 inputs$/);
  });
});

describe('meshctl validate: files and documents', () => {
  test('a YAML syntax error is reported with its line and column; the other documents are still checked', async () => {
    const file = await scratch(
      'broken.yaml',
      [
        'apiVersion: v1',
        'kind: Namespace',
        'metadata:',
        '  name: foo',
        '---',
        'apiVersion: security.mesh.io/v1beta1',
        'kind: PeerAuthentication',
        'metadata:',
        '  name: default: strict',
        '---',
        'apiVersion: security.mesh.io/v1beta1',
        'kind: PeerAuthentication',
        'metadata: {name: other, namespace: foo}',
        'spec: {mtls: {mode: NOPE}}',
        '',
      ].join('\n'),
    );
    const result = await validate(['validate', '-f', file]);
    expect(result.code).toBe(1);
    expectLine(result.errLines, new RegExp(`^Error: ${file}:9:9: invalid YAML: .+`));
    expect(result.errLines).toContain(
      `Error: ${file}: PeerAuthentication foo/other: spec.mtls.mode: expected one of UNSET, DISABLE, PERMISSIVE, STRICT, got "NOPE"`,
    );
    expect(result.errLines.at(-1)).toBe('Error: validation failed: 2 errors in 1 of 1 input');
  });

  test('a directory is walked for .yaml, .yml and .json files, in order', async () => {
    const dir = join(work, 'tree');
    const policy = 'apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: foo}\nspec: {mtls: {mode: STRICT}}\n';
    await scratch('tree/b.yaml', policy);
    await scratch('tree/a/nested.yml', policy);
    await scratch(
      'tree/c.json',
      JSON.stringify({
        apiVersion: 'networking.mesh.io/v1alpha3',
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'foo' },
        spec: { selector: { mesh: 'ingressgateway' }, servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }] },
      }),
    );
    await scratch('tree/notes.txt', 'this: [is not checked');
    const result = await validate(['validate', '-f', dir]);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out.split('\n').filter(Boolean)).toEqual(
      [join(dir, 'a', 'nested.yml'), join(dir, 'b.yaml'), join(dir, 'c.json')].map((file) => `${JSON.stringify(file)} is valid`),
    );
  });

  test('a directory with nothing to validate, and a missing file, are errors', async () => {
    const empty = join(work, 'empty');
    await mkdir(empty, { recursive: true });
    const missing = join(work, 'missing.yaml');
    const result = await validate(['validate', '-f', empty, '-f', missing]);
    expect(result.code).toBe(1);
    expect(result.errLines).toEqual([
      `Error: ${empty}: no .yaml, .yml or .json files in this directory`,
      `Error: ${missing}: cannot read file: no such file or directory`,
      'Error: validation failed: 2 errors in 2 of 2 inputs',
    ]);
  });

  test('- reads standard input', async () => {
    const policy = readFileSync(join(corpusDir, 'peer-authentication', 'valid-mesh-wide-strict.yaml'), 'utf8');
    expect(await validate(['validate', '-f', '-'], policy)).toMatchObject({ code: 0, out: 'validation succeed\n', err: '' });
    const bad = await validate(['validate', '-f', '-'], policy.replace('mode: STRICT', 'mode: LOOSE'));
    expect(bad.code).toBe(1);
    expect(bad.errLines[0]).toMatch(/^Error: -: PeerAuthentication mesh-system\/default: spec\.mtls\.mode: /);
  });

  test('kinds we do not own are only checked for apiVersion, kind and name; unknown mesh kinds are errors', async () => {
    const file = await scratch(
      'mixed.yaml',
      [
        'apiVersion: v1\nkind: Service\nmetadata: {name: httpbin, namespace: foo}\nspec: {ports: [{port: 8000}]}',
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: httpbin}\nspec: {anything: [goes]}',
        'apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: waypoint}\nspec: {gatewayClassName: mesh}',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {a: b}}',
        'kind: Secret\nmetadata: {name: s}',
        'apiVersion: networking.mesh.io/v1alpha3\nkind: Sidecar\nmetadata: {name: default}\nspec: {}',
        'apiVersion: telemetry.mesh.io/v1\nkind: Telemetry\nmetadata: {name: t}\nspec: {}',
        '# only a comment',
      ].join('\n---\n'),
    );
    const result = await validate(['validate', '-f', file]);
    expect(result.code).toBe(1);
    expect(result.errLines.slice(0, -1)).toEqual([
      `Error: ${file}: ConfigMap (no name): metadata.name: required: expected the name of the resource`,
      `Error: ${file}: Secret s: apiVersion: required: expected an apiVersion such as v1 or apps/v1`,
      `Error: ${file}: Sidecar default: kind: unknown kind "Sidecar" for apiVersion networking.mesh.io/v1alpha3: expected one of DestinationRule, Gateway, ServiceEntry, VirtualService, WorkloadEntry, WorkloadGroup`,
      `Error: ${file}: Telemetry t: apiVersion: unknown apiVersion "telemetry.mesh.io/v1": expected one of security.mesh.io/v1beta1, security.mesh.io/v1, networking.mesh.io/v1alpha3, networking.mesh.io/v1beta1, networking.mesh.io/v1`,
      `Error: ${file}: Telemetry t: kind: unknown kind "Telemetry": expected one of AuthorizationPolicy, DestinationRule, Gateway, PeerAuthentication, RequestAuthentication, ServiceEntry, VirtualService, WorkloadEntry, WorkloadGroup`,
    ]);
  });

  test('ServiceEntry, WorkloadEntry and WorkloadGroup are validated like the other mesh kinds', async () => {
    const valid = ['service-entry/valid-static-endpoints.yaml', 'workload-entry/valid-vm.yaml', 'workload-group/valid-http-probe.yaml'];
    const files = valid.map((name) => join(corpusDir, name));
    expect(await validate(['validate', ...files.flatMap((file) => ['-f', file])])).toMatchObject({
      code: 0,
      out: files.map((file) => `"${file}" is valid\n`).join(''),
      err: '',
    });

    const file = await scratch(
      'registry.yaml',
      [
        'apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: db, namespace: foo}\nspec: {hosts: [db.example.com], resolution: NONE, endpoints: [{address: 10.0.0.1}]}',
        'apiVersion: networking.mesh.io/v1beta1\nkind: WorkloadEntry\nmetadata: {name: vm, namespace: foo}\nspec: {labels: {app: vm}}',
        'apiVersion: networking.mesh.io/v1alpha3\nkind: WorkloadGroup\nmetadata: {name: vms, namespace: foo}\nspec: {template: {}, probe: {periodSeconds: 5}}',
      ].join('\n---\n'),
    );
    const result = await validate(['validate', '-f', file]);
    expect(result.code).toBe(1);
    expect(result.errLines.slice(0, -1)).toEqual([
      `Error: ${file}: ServiceEntry foo/db: spec.endpoints: resolution NONE forwards to the address the client asked for: expected no endpoints`,
      `Error: ${file}: WorkloadEntry foo/vm: spec.address: required: expected an IP address, a DNS name or a unix:// socket (or a network, for a workload reached through its gateway)`,
      `Error: ${file}: WorkloadGroup foo/vms: spec.probe: expected a health check method: one of httpGet, tcpSocket, exec or grpc`,
    ]);
  });

  test('a List stands for its items', async () => {
    const file = await scratch(
      'list.yaml',
      'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata: {name: a}\n- apiVersion: security.mesh.io/v1beta1\n  kind: AuthorizationPolicy\n  metadata: {name: b, namespace: foo}\n  spec: {action: NONE}\n',
    );
    const result = await validate(['validate', '-f', file]);
    expect(result.code).toBe(1);
    expect(result.errLines[0]).toBe(`Error: ${file}: AuthorizationPolicy foo/b: spec.action: expected one of ALLOW, DENY, AUDIT, CUSTOM, got "NONE"`);
  });

  test('without -f it is a usage error', async () => {
    const result = await validate(['validate']);
    expect(result.code).toBe(2);
    expect(result.err).toBe('Error: expected resources to validate: give files or directories with -f (or -f - for stdin)\n');
  });

  test('help shows the flags and examples', async () => {
    const result = await validate(['validate', '--help']);
    expect(result.code).toBe(0);
    expect(result.out).toContain('Usage: meshctl validate|v -f FILENAME [options]');
    expect(result.out).toMatch(/-f, --filename <stringSlice>\s+Inputs of files to validate/);
    expect(result.out).toMatch(/-x, --referential \[bool\]\s+Enable structural validation for policy and\s+telemetry \(default: true/);
    expect(result.out).toContain('meshctl validate -f deploy/samples/policies');
  });
});

describe('meshctl validate --referential', () => {
  const gateway =
    'apiVersion: networking.mesh.io/v1alpha3\nkind: Gateway\nmetadata: {name: ingress, namespace: mesh-system}\nspec:\n  selector: {mesh: ingressgateway}\n  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*"]}]\n';
  const rule =
    'apiVersion: networking.mesh.io/v1alpha3\nkind: DestinationRule\nmetadata: {name: reviews, namespace: foo}\nspec:\n  host: reviews\n  subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]\n';
  const service = [
    'apiVersion: networking.mesh.io/v1alpha3',
    'kind: VirtualService',
    'metadata: {name: reviews, namespace: foo}',
    'spec:',
    '  hosts: [reviews.example.com]',
    '  gateways: [mesh-system/ingress, ingress.mesh-system, mesh, mesh-system/missing, local]',
    '  http:',
    '  - match: [{gateways: [mesh-system/gone], uri: {prefix: /a}}]',
    '    route:',
    '    - {destination: {host: reviews, subset: v1}, weight: 50}',
    '    - {destination: {host: reviews.foo.svc.cluster.local, subset: v3}, weight: 50}',
    '    mirror: {host: ratings, subset: v9}',
    '',
  ].join('\n');

  test('warns about gateways and subsets the files do not define; still valid', async () => {
    const gatewayFile = await scratch('refs/gateway.yaml', gateway);
    const servicesFile = await scratch('refs/services.yaml', `${rule}---\n${service}`);
    const result = await validate(['validate', '-f', gatewayFile, '-f', servicesFile]);
    expect(result.code).toBe(0);
    expect(result.out).toBe(`${JSON.stringify(gatewayFile)} is valid\n${JSON.stringify(servicesFile)} is valid\n`);
    const prefix = `Warning: ${servicesFile}: VirtualService foo/reviews`;
    expect(result.errLines).toEqual([
      `${prefix}: spec.gateways[1]: "ingress.mesh-system" is the legacy "name.namespace" form: prefer "mesh-system/ingress"`,
      `${prefix}: spec.gateways[3]: gateway "mesh-system/missing" (mesh-system/missing) is not defined in the given files: expected a Gateway there, or "mesh"`,
      `${prefix}: spec.gateways[4]: gateway "local" (foo/local) is not defined in the given files: expected a Gateway there, or "mesh"`,
      `${prefix}: spec.http[0].match[0].gateways[0]: gateway "mesh-system/gone" (mesh-system/gone) is not defined in the given files: expected a Gateway there, or "mesh"`,
      `${prefix}: spec.http[0].route[1].destination.subset: subset "v3" is not defined in DestinationRule foo/reviews for host reviews.foo.svc.cluster.local`,
    ]);
  });

  test('without the Gateway among the files, both ways of naming it are flagged', async () => {
    const servicesFile = await scratch('refs-alone/services.yaml', `${rule}---\n${service}`);
    const result = await validate(['validate', '-x', '-f', servicesFile]);
    expect(result.code).toBe(0);
    expect(result.errLines.filter((line) => line.includes('(mesh-system/ingress) is not defined'))).toHaveLength(2);
  });

  test.each([['--referential=false'], ['-x=false'], ['-x', 'false']])('%s turns the checks off', async (...flags) => {
    const servicesFile = await scratch('refs-off/services.yaml', `${rule}---\n${service}`);
    const result = await validate(['validate', ...flags, '-f', servicesFile]);
    expect(result.code).toBe(0);
    expect(result.out).toBe(`${JSON.stringify(servicesFile)} is valid\n`);
    // What remains is the resource's own warning, not a reference check.
    expect(result.errLines).toEqual([expect.stringContaining('is the legacy "name.namespace" form')]);
  });
});
