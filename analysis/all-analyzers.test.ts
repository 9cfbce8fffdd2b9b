import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { KIND_NAMES } from '../crds/index.js';
import { ALL_ANALYZERS } from './all-analyzers.js';
import { buildSnapshot } from './build-snapshot.js';
import { formatMessage } from './messages.js';
import { runAnalyzers } from './run-analyzers.js';
import type { InputName, Resource } from './snapshot.js';
import {
  authorizationPolicy,
  deployment,
  destinationRule,
  namespace,
  peerAuthentication,
  pod,
  requestAuthentication,
  secret,
  service,
  virtualService,
} from './testing/fixtures.js';

const SAMPLES = ['deploy/samples/config', 'deploy/samples/policies'];
const CORPUS = 'crds/testdata/corpus';
const EVERY_INPUT: readonly InputName[] = [
  'PeerAuthentication',
  'RequestAuthentication',
  'AuthorizationPolicy',
  'DestinationRule',
  'Gateway',
  'VirtualService',
  'ServiceEntry',
  'WorkloadEntry',
  'WorkloadGroup',
  'MeshObject',
  'Namespace',
  'Service',
  'Pod',
  'Deployment',
  'Secret',
  'MutatingWebhookConfiguration',
  'ConfigMap',
  'MeshConfig',
];

function sampleObjects(folders: readonly string[] = SAMPLES): object[] {
  return folders.flatMap((folder) =>
    readdirSync(folder)
      .filter((file) => file.endsWith('.yaml') && !file.endsWith('.expected.yaml'))
      .flatMap((file) => parseAllDocuments(readFileSync(join(folder, file), 'utf8')).map((document) => document.toJS() as object | null))
      .filter((object): object is object => object !== null),
  );
}

/** A bit of everything the analyzers read, some of it wrong on purpose. */
const extras = [
  namespace('default', { 'mesh-injection': 'enabled' }),
  namespace('shop', { 'mesh.io/rev': 'canary', 'mesh-injection': 'enabled' }),
  service('reviews', 'default', { app: 'reviews' }, [
    { name: 'http', port: 9080 },
    { name: 'mongo', port: 27017 },
  ]),
  pod('reviews-v1', 'default', {
    labels: { app: 'reviews', version: 'v1' },
    serviceAccountName: 'reviews',
    containers: [
      { name: 'app', securityContext: { runAsUser: 1337 } },
      { name: 'mesh-proxy', image: 'mesh/proxyv2:old' },
    ],
  }),
  deployment('reviews', 'default', { app: 'reviews' }),
  deployment(
    'meshd',
    'mesh-system',
    { app: 'meshd' },
    { labels: { app: 'meshd', mesh: 'pilot' } },
    { containers: [{ name: 'discovery', image: 'mesh/pilot:1' }] },
  ),
  virtualService('reviews', 'default', {
    hosts: ['reviews'],
    http: [{ match: [{ uri: { regex: '(?=x)' } }], route: [{ destination: { host: 'reviews', subset: 'v9' } }] }],
  }),
  destinationRule('reviews', 'default', { host: 'reviews', trafficPolicy: { tls: { mode: 'DISABLE' } }, subsets: [{ name: 'v1', labels: { version: 'v1' } }] }),
  peerAuthentication('strict', 'default', {
    selector: { matchLabels: { app: 'reviews' } },
    mtls: { mode: 'STRICT' },
    portLevelMtls: { '1234': { mode: 'DISABLE' } },
  }),
  requestAuthentication('jwt', 'default', { selector: { matchLabels: { app: 'nothing' } } }),
  authorizationPolicy('deny', 'default', {
    action: 'DENY',
    selector: { matchLabels: { app: 'reviews' } },
    rules: [{ from: [{ source: { principals: ['cluster.local/ns/gone/sa/x'], namespaces: ['gone'] } }], to: [{ operation: { paths: ['/admin'] } }] }],
  }),
  secret('cred', 'mesh-system'),
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'mesh-sidecar-injector', namespace: 'mesh-system' },
    data: { values: '{"global":{"hub":"mesh","tag":"1"}}' },
  },
];

describe('ALL_ANALYZERS', () => {
  test('every analyzer has a unique name and a description', () => {
    const names = ALL_ANALYZERS.map((analyzer) => analyzer.name);
    expect(new Set(names).size).toBe(names.length);
    for (const analyzer of ALL_ANALYZERS) expect(analyzer.description.length).toBeGreaterThan(10);
    expect(names).toEqual([...names].sort());
  });

  test('over a rich snapshot with every input, every analyzer runs and none reads an input it did not declare', () => {
    const snapshot = buildSnapshot({ objects: [...sampleObjects(), ...extras].map((object) => ({ object })), complete: EVERY_INPUT });
    const result = runAnalyzers(snapshot, ALL_ANALYZERS);
    const lines = result.messages.map(formatMessage);
    expect(lines.filter((line) => line.includes('[MSH0001]'))).toEqual([]);
    expect(result.skipped).toEqual([]);
    expect(result.executed).toHaveLength(ALL_ANALYZERS.length);
    const codes = new Set(result.messages.map((message) => message.code));
    for (const code of ['MSH0101', 'MSH0102', 'MSH0158', 'MSH0113', 'MSH0122', 'MSH0123', 'MSH0127', 'MSH0144', 'MSH0175', 'MSH1004', 'MSH1005'])
      expect(codes).toContain(code);
  });

  test('over the validation corpus (85 invalid objects of every kind, typed as the reference would hold them), no analyzer fails', () => {
    const corpus = sampleObjects(readdirSync(CORPUS).map((kind) => join(CORPUS, kind)));
    const snapshot = buildSnapshot({ objects: [...corpus, ...extras].map((object) => ({ object })), complete: EVERY_INPUT });
    const invalid = KIND_NAMES.flatMap((kind): readonly Resource<unknown>[] => snapshot.inputs[kind]).filter((resource) => resource.invalid !== undefined);
    expect(invalid.length).toBeGreaterThan(60);
    const result = runAnalyzers(snapshot, ALL_ANALYZERS);
    expect(result.messages.map(formatMessage).filter((line) => line.includes('[MSH0001]'))).toEqual([]);
    expect(result.executed).toHaveLength(ALL_ANALYZERS.length);
  });
});
