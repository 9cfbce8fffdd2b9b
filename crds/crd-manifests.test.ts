import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { toolPath } from '../testing/tools.js';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';
import { startApiServerDouble, type ApiServerDouble } from '../apiserver-double/index.js';
import { buildCrdManifests, renderCrdManifests, type CustomResourceDefinition } from './crd-manifests.js';
import { CRD_MANIFESTS_FILE, writeCrdManifests } from './generate-crds.js';
import { KIND_NAMES, KINDS, type KindName } from './kinds.js';
import { prunedFields, schemaViolations, structuralSchemaProblems } from './structural-schema-check.js';
import type { StructuralSchema } from './structural-schema.js';
import { refreshingGolden } from '../testing/golden.js';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..');
const manifestsPath = join(repoRoot, CRD_MANIFESTS_FILE);
const corpusDir = join(here, 'testdata', 'corpus');
let kubectlPath = '';

type Resource = { apiVersion: string; kind: KindName; metadata: { name: string; namespace?: string }; spec: unknown };
type CorpusCase = { label: string; file: string; resource: Resource };

function corpus(prefix: 'valid-' | 'invalid-'): CorpusCase[] {
  const cases: CorpusCase[] = [];
  for (const dir of readdirSync(corpusDir).sort()) {
    for (const name of readdirSync(join(corpusDir, dir)).sort()) {
      if (!name.startsWith(prefix) || !name.endsWith('.yaml') || name.endsWith('.expected.yaml')) continue;
      const file = join(corpusDir, dir, name);
      cases.push({ label: `${dir}/${name}`, file, resource: parse(readFileSync(file, 'utf8')) as Resource });
    }
  }
  return cases;
}

const crds = buildCrdManifests();
const validCases = corpus('valid-');
const invalidCases = corpus('invalid-');

function crdOf(kind: string): CustomResourceDefinition {
  const crd = crds.find((c) => c.spec.names.kind === kind);
  if (!crd) throw new Error(`no CRD for ${kind}`);
  return crd;
}

function schemaOf(kind: string): StructuralSchema {
  return crdOf(kind).spec.versions[0]?.schema.openAPIV3Schema as StructuralSchema;
}

describe('CRD manifests', () => {
  test('crds/generated/crds.yaml is up to date', async () => {
    if (refreshingGolden) await writeCrdManifests(manifestsPath);
    const committed = await readFile(manifestsPath, 'utf8').catch(() => '');
    const rendered = renderCrdManifests();
    if (committed !== rendered) {
      const lines = committed.split('\n');
      const firstDifference = rendered.split('\n').findIndex((line, i) => line !== lines[i]);
      throw new Error(
        `${CRD_MANIFESTS_FILE} is stale (first difference at line ${firstDifference + 1}): regenerate it with\n` +
          `  REFRESH_GOLDEN=1 node --experimental-vm-modules node_modules/jest/bin/jest.js crds/crd-manifests.test.ts\n` +
          'and review the diff.',
      );
    }
    expect(parseAllDocuments(committed).map((doc) => doc.toJS())).toEqual(JSON.parse(JSON.stringify(crds)));
    expect(committed.startsWith('# ')).toBe(true);
  });

  test('one namespaced CRD per kind, named plural.group, in a stable order', () => {
    expect(crds.map((crd) => crd.metadata.name)).toEqual([
      'authorizationpolicies.security.mesh.io',
      'destinationrules.networking.mesh.io',
      'gateways.networking.mesh.io',
      'peerauthentications.security.mesh.io',
      'requestauthentications.security.mesh.io',
      'serviceentries.networking.mesh.io',
      'virtualservices.networking.mesh.io',
      'workloadentries.networking.mesh.io',
      'workloadgroups.networking.mesh.io',
    ]);
    for (const kind of KIND_NAMES) {
      const info = KINDS[kind];
      const crd = crdOf(kind);
      expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
      expect(crd.spec).toMatchObject({
        group: info.group,
        scope: 'Namespaced',
        names: { kind, listKind: `${kind}List`, plural: info.plural, singular: info.singular, shortNames: info.shortNames, categories: info.categories },
      });
      // Every served version, newest first, with one schema; only the storage version stores.
      expect(crd.spec.versions.map((version) => version.name)).toEqual([...info.versions].reverse());
      expect(crd.spec.versions.filter((version) => version.storage).map((version) => version.name)).toEqual([info.version]);
      for (const version of crd.spec.versions) {
        expect(version).toMatchObject({ served: true, subresources: { status: {} } });
        expect(version.schema).toEqual(crd.spec.versions[0]?.schema);
      }
    }
  });

  test('building is pure: equal manifests, no shared objects', () => {
    const again = buildCrdManifests();
    expect(again).toEqual(crds);
    (again[0] as CustomResourceDefinition).spec.names.shortNames.push('changed');
    expect(buildCrdManifests()).toEqual(crds);
    expect(renderCrdManifests()).toBe(renderCrdManifests());
  });

  test('printer columns per kind, Age last everywhere', () => {
    const columns = Object.fromEntries(
      crds.map((crd) => [crd.spec.names.kind, crd.spec.versions[0]?.additionalPrinterColumns.map((c) => `${c.name}=${c.jsonPath}`)]),
    );
    const age = 'Age=.metadata.creationTimestamp';
    expect(columns).toEqual({
      AuthorizationPolicy: ['Action=.spec.action', age],
      DestinationRule: ['Host=.spec.host', age],
      Gateway: [age],
      PeerAuthentication: ['Mode=.spec.mtls.mode', age],
      RequestAuthentication: [age],
      ServiceEntry: ['Hosts=.spec.hosts', 'Location=.spec.location', 'Resolution=.spec.resolution', age],
      VirtualService: ['Gateways=.spec.gateways', 'Hosts=.spec.hosts', age],
      WorkloadEntry: ['Address=.spec.address', age],
      WorkloadGroup: [age],
    });
  });

  test.each(KIND_NAMES)('%s: the schema is structural', (kind) => {
    const schema = schemaOf(kind);
    expect(structuralSchemaProblems(schema)).toEqual([]);
    expect(schema.required).toEqual(['spec']);
    expect(schema.properties?.['status']).toMatchObject({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    expect(schema.properties?.['spec']?.type).toBe('object');
    expect(schema.properties?.['spec']?.description).toEqual(expect.any(String));
    const text = JSON.stringify(schema);
    for (const banned of ['"$ref"', '"$defs"', '"const"', '"propertyNames"', '"additionalProperties":false', '"$schema"']) {
      expect(text).not.toContain(banned);
    }
  });

  test('enums, required fields and maps survive', () => {
    const spec = (kind: string): StructuralSchema => schemaOf(kind).properties?.['spec'] as StructuralSchema;
    expect(spec('PeerAuthentication').properties?.['mtls']?.properties?.['mode']?.enum).toEqual(['UNSET', 'DISABLE', 'PERMISSIVE', 'STRICT']);
    expect(spec('PeerAuthentication').properties?.['portLevelMtls']?.additionalProperties?.properties?.['mode']?.type).toBe('string');
    expect(spec('DestinationRule').required).toEqual(['host']);
    expect(spec('Gateway').properties?.['servers']?.items?.required).toEqual(['port', 'hosts']);
    expect(spec('Gateway').properties?.['selector']).toEqual({ additionalProperties: { type: 'string' }, type: 'object' });
  });

  describe('every valid corpus example passes the schema and loses nothing to pruning', () => {
    test.each(validCases.map((c) => [c.label, c] as const))('%s', (_label, c) => {
      const schema = schemaOf(c.resource.kind);
      const body = { spec: c.resource.spec };
      expect(schemaViolations(body, schema)).toEqual([]);
      expect(prunedFields(body, schema)).toEqual([]);
    });
  });

  test.each([
    ['peer-authentication/invalid-mode.yaml', ['spec.mtls.mode']],
    ['peer-authentication/invalid-types.yaml', ['spec.selector.matchLabels', 'spec.mtls']],
    ['authorization-policy/invalid-action.yaml', ['spec.action']],
    ['destination-rule/invalid-tls-mode.yaml', ['spec.trafficPolicy.tls.mode']],
    ['gateway/invalid-tls-mode.yaml', ['spec.servers[0].tls.mode', 'spec.servers[0].tls.minProtocolVersion']],
  ])('the API server would reject %s too', (label, paths) => {
    const c = invalidCases.find((x) => x.label === label);
    if (!c) throw new Error(`no corpus case ${label}`);
    const violations = schemaViolations({ spec: c.resource.spec }, schemaOf(c.resource.kind));
    expect(violations.map((v) => v.slice(0, v.indexOf(':')))).toEqual(paths);
  });

  test('unknown fields of the corpus are pruned by the API server', () => {
    const cases = invalidCases.filter((c) => c.label.endsWith('/invalid-unknown-field.yaml'));
    expect(cases.length).toBeGreaterThanOrEqual(4);
    for (const c of cases) expect(prunedFields({ spec: c.resource.spec }, schemaOf(c.resource.kind))).not.toEqual([]);
  });
});

describe('CRD manifests: the real kubectl against the API server double', () => {
  let server: ApiServerDouble;
  let work: string;
  let kubeconfig: string;

  const kubectl = async (...args: string[]): Promise<string> => {
    try {
      const { stdout } = await run(kubectlPath, ['--kubeconfig', kubeconfig, ...args], { env: { HOME: work }, timeout: 30_000 });
      return stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr ?? e.message}`, { cause: err });
    }
  };

  beforeAll(async () => {
    kubectlPath = await toolPath('kubectl');
    server = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    work = await mkdtemp(join(tmpdir(), 'mesh-crds-'));
    kubeconfig = join(work, 'kubeconfig');
    await server.writeKubeconfig(kubeconfig);
  }, 150_000);

  afterAll(async () => {
    await server?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('kubectl applies the CRDs, then every valid corpus example; get lists them; the double stores them', async () => {
    const applied = await kubectl('apply', '-f', manifestsPath);
    for (const crd of crds) expect(applied).toContain(`customresourcedefinition.apiextensions.k8s.io/${crd.metadata.name} created`);
    expect(
      server
        .objects('apiextensions.k8s.io/v1', 'CustomResourceDefinition')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(crds.map((crd) => crd.metadata.name));
    expect(await kubectl('wait', '--for=condition=Established', '--timeout=10s', ...crds.map((crd) => `crd/${crd.metadata.name}`))).toContain('condition met');

    const examples = validCases;
    const namespaces = [...new Set(examples.map((c) => c.resource.metadata.namespace ?? 'default'))].filter((ns) => ns !== 'default').sort();
    const namespaceFile = join(work, 'namespaces.yaml');
    await writeFile(namespaceFile, namespaces.map((ns) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`).join('---\n'));
    const output = await kubectl('apply', '-f', namespaceFile, ...examples.flatMap((c) => ['-f', c.file]));

    // Later examples with the same kind, namespace and name replace earlier ones, as apply does.
    const expected = new Map<string, Resource>();
    for (const c of examples) {
      const { kind, metadata } = c.resource;
      expected.set(`${kind} ${metadata.namespace ?? 'default'}/${metadata.name}`, c.resource);
      expect(output).toMatch(
        new RegExp(`${KINDS[kind].singular}\\.${KINDS[kind].group.replace(/\./g, '\\.')}/${metadata.name} (created|configured|unchanged)`),
      );
    }

    for (const kind of KIND_NAMES) {
      const { group, version } = KINDS[kind];
      const stored = server.objects(`${group}/${version}`, kind).map((o) => [`${kind} ${o.metadata?.namespace}/${o.metadata?.name}`, o['spec']]);
      const wanted = [...expected].filter(([, r]) => r.kind === kind).map(([key, r]) => [key, r.spec]);
      expect(stored.sort()).toEqual(wanted.sort());
    }

    // One `get` of the category lists every kind, each table with its printer columns.
    const listed = await kubectl('get', 'mesh-io', '--all-namespaces');
    const tables = listed
      .trim()
      .split(/\n\s*\n/)
      .map((block) => block.split('\n'));
    const headerOf = (kind: KindName): string[] | undefined => {
      const prefix = `${KINDS[kind].singular}.${KINDS[kind].group}/`;
      return tables.find((rows) => rows.slice(1).some((row) => row.split(/\s+/)[1]?.startsWith(prefix)))?.[0]?.split(/\s+/);
    };
    expect(headerOf('PeerAuthentication')).toEqual(['NAMESPACE', 'NAME', 'MODE', 'AGE']);
    expect(headerOf('RequestAuthentication')).toEqual(['NAMESPACE', 'NAME', 'AGE']);
    expect(headerOf('AuthorizationPolicy')).toEqual(['NAMESPACE', 'NAME', 'ACTION', 'AGE']);
    expect(headerOf('DestinationRule')).toEqual(['NAMESPACE', 'NAME', 'HOST', 'AGE']);
    expect(headerOf('Gateway')).toEqual(['NAMESPACE', 'NAME', 'AGE']);
    expect(headerOf('VirtualService')).toEqual(['NAMESPACE', 'NAME', 'GATEWAYS', 'HOSTS', 'AGE']);
    for (const key of expected.keys()) {
      const [kind, where] = key.split(' ') as [KindName, string];
      const [namespace, name] = where.split('/');
      const row = new RegExp(`^${namespace}\\s+${KINDS[kind].singular}\\.${KINDS[kind].group.replace(/\./g, '\\.')}/${name}\\s`, 'm');
      expect(listed).toMatch(row);
    }

    const strict = (await kubectl('get', 'pa', '-n', 'mesh-system', 'default', '--no-headers')).trim().split(/\s+/);
    expect(strict.slice(0, 2)).toEqual(['default', 'STRICT']);
  });
});
