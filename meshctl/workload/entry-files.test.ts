import { execFileSync } from 'node:child_process';
import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import { entryFiles, shellQuote, type EntryFilesInput } from './entry-files.js';

const BASE: EntryFilesInput = {
  group: {
    name: 'ratings',
    namespace: 'vm',
    annotations: {},
    metadataLabels: {},
    metadataAnnotations: {},
    templateLabels: {},
    ports: {},
    serviceAccount: 'default',
    network: '',
  },
  meshConfig: {},
  proxyConfigOverlays: [],
  meshNamespace: 'mesh-system',
  revision: '',
  clusterId: 'Kubernetes',
  captureDns: false,
  autoregister: false,
  workloadIp: '',
  ingressIp: '10.1.2.3',
};

const envOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .trimEnd()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

describe('entryFiles', () => {
  test('a value a shell reads back as written, quotes and all', () => {
    const value = `it's "quoted" $HOME \`x\` \\ *`;
    expect(execFileSync('bash', ['-c', `v=${shellQuote(value)}; printf %s "$v"`], { encoding: 'utf8' })).toBe(value);
    expect(shellQuote('')).toBe("''");
  });

  test('a bare group: every port captured, no POD_PORTS, canonical names from the group, no probe, the default status port excluded', () => {
    const { files, warnings } = entryFiles({ ...BASE, meshConfig: { defaultConfig: { readinessProbe: { tcpSocket: { port: 1 } } } } });
    expect(warnings).toEqual([]);
    const env = envOf(files['cluster.env'] ?? '');
    expect(env).toMatchObject({
      MESH_INBOUND_PORTS: "'*'",
      MESH_LOCAL_EXCLUDE_PORTS: "'22,15090,15021,15020'",
      CANONICAL_SERVICE: "'ratings'",
      CANONICAL_REVISION: "'latest'",
      TRUST_DOMAIN: "'cluster.local'",
    });
    expect(env['MESH_META_POD_PORTS']).toBeUndefined();
    expect(env['CA_ADDR']).toBeUndefined();
    expect((parse(files['mesh.yaml'] ?? '') as { defaultConfig: Record<string, unknown> }).defaultConfig['readinessProbe']).toBeUndefined();
    expect(files['sidecar.env']).toBeUndefined();
    expect(files['hosts']).toBe('10.1.2.3 meshd.mesh-system.svc\n');
  });

  test('a status port of 15021 adds none; another is excluded itself', () => {
    const excluded = (statusPort: number) =>
      envOf(entryFiles({ ...BASE, meshConfig: { defaultConfig: { statusPort } } }).files['cluster.env'] ?? '')['MESH_LOCAL_EXCLUDE_PORTS'];
    expect(excluded(15021)).toBe("'22,15090,15021'");
    expect(excluded(15099)).toBe("'22,15090,15021,15099'");
  });

  test('template labels override the metadata labels, with a warning; canonical labels win over app and version', () => {
    const { files, warnings } = entryFiles({
      ...BASE,
      group: { ...BASE.group, metadataLabels: { app: 'a', version: 'v1' }, templateLabels: { version: 'v2', 'service.mesh.io/canonical-name': 'c' } },
    });
    expect(warnings).toEqual([
      'labels should be set in spec.metadata.labels; these spec.template.labels override them: service.mesh.io/canonical-name=c,version=v2',
    ]);
    const metadata = (parse(files['mesh.yaml'] ?? '') as { defaultConfig: { proxyMetadata: Record<string, string> } }).defaultConfig.proxyMetadata;
    expect(metadata['CANONICAL_SERVICE']).toBe('c');
    expect(metadata['CANONICAL_REVISION']).toBe('v2');
    expect(JSON.parse(metadata['MESH_METAJSON_LABELS'] ?? '')).toEqual({
      app: 'a',
      version: 'v2',
      'service.mesh.io/canonical-name': 'c',
      'service.mesh.io/canonical-revision': 'v2',
    });
  });

  test('a revision keeps a discovery address the mesh config sets; CA_ADDR and hosts name the revision', () => {
    const { files } = entryFiles({ ...BASE, revision: 'canary', meshConfig: { defaultConfig: { discoveryAddress: 'elsewhere:15012' } } });
    expect((parse(files['mesh.yaml'] ?? '') as { defaultConfig: Record<string, unknown> }).defaultConfig['discoveryAddress']).toBe('elsewhere:15012');
    expect(envOf(files['cluster.env'] ?? '')['CA_ADDR']).toBe("'meshd-canary.mesh-system.svc:15012'");
    expect(files['hosts']).toBe('10.1.2.3 meshd-canary.mesh-system.svc\n');
    expect(entryFiles({ ...BASE, revision: 'default' }).files['hosts']).toBe('10.1.2.3 meshd.mesh-system.svc\n');
  });
});
