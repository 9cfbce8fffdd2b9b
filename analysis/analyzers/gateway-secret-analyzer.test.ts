import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSignedCertificate } from '../../testing/openssl.js';
import { buildSnapshot } from '../build-snapshot.js';
import { credentialProblem } from '../credential-verdict.js';
import { analyze, gateway, pod } from '../testing/fixtures.js';
import { gatewaySecretAnalyzer } from './gateway-workload-analyzers.js';

// Certificates and keys are made with openssl for each run: none is checked in.
let dir: string;
let cert: string;
let key: string;
let otherKey: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mesh-analysis-credential-'));
  const [mine, other] = await Promise.all([
    selfSignedCertificate(dir, 'gateway', 'DNS:shop.example.com'),
    selfSignedCertificate(dir, 'other', 'DNS:other.example.com'),
  ]);
  [cert, key, otherKey] = await Promise.all([readFile(mine.certFile, 'utf8'), readFile(mine.keyFile, 'utf8'), readFile(other.keyFile, 'utf8')]);
});

afterAll(() => rm(dir, { recursive: true, force: true }));

const DAY = 24 * 60 * 60 * 1000;
const b64 = (text: string): string => Buffer.from(text).toString('base64');
const tlsSecret = (name: string, namespace: string, data: Record<string, string>, stringData?: Record<string, string>): object => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'kubernetes.io/tls',
  metadata: { name, namespace },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  ...(stringData ? { stringData } : {}),
});
const verdict = (secret: object, now = new Date()): string | undefined => credentialProblem(secret, now);
/** The lines of text of a PEM body: what must never appear in a message or a snapshot. */
const pemLines = (pem: string): string[] => pem.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----'));

describe('credentialProblem: the verdict a snapshot keeps instead of the key material', () => {
  test('a certificate and its key, under tls.crt/tls.key, cert/key or stringData, are a credential', () => {
    expect(verdict(tlsSecret('c', 'ns', { 'tls.crt': cert, 'tls.key': key }))).toBeUndefined();
    expect(verdict(tlsSecret('c', 'ns', { cert, key, 'tls.crt': 'junk', 'tls.key': 'junk' }))).toBeUndefined();
    expect(verdict(tlsSecret('c', 'ns', {}, { 'tls.crt': cert, 'tls.key': key }))).toBeUndefined();
  });

  test.each([
    ['empty keys', () => tlsSecret('c', 'ns', { 'tls.crt': '', 'tls.key': '' }), 'no certificate and key'],
    ['a certificate without key', () => tlsSecret('c', 'ns', { 'tls.crt': cert }), 'no certificate and key'],
    ['a certificate that is no PEM', () => tlsSecret('c', 'ns', { 'tls.crt': 'junk', 'tls.key': key }), 'tls.crt holds no parsable PEM certificate'],
    ['a key first where the certificate belongs', () => tlsSecret('c', 'ns', { 'tls.crt': key + cert, 'tls.key': key }), 'tls.crt holds no parsable PEM'],
    ['an unparsable key', () => tlsSecret('c', 'ns', { cert, key: 'junk' }), 'key holds no parsable private key'],
    [
      'the key of another certificate',
      () => tlsSecret('c', 'ns', { 'tls.crt': cert, 'tls.key': otherKey }),
      'tls.key does not match the certificate of tls.crt',
    ],
  ])('%s: not a credential', (_case, secret, problem) => {
    expect(verdict(secret())).toContain(problem);
  });

  test('judged at a time outside the certificate validity: expired, or not yet valid', () => {
    const secret = tlsSecret('c', 'ns', { 'tls.crt': cert, 'tls.key': key });
    expect(verdict(secret, new Date(Date.now() + 3 * DAY))).toBe('the certificate of tls.crt is expired or not yet valid');
    expect(verdict(secret, new Date(Date.now() - 3 * DAY))).toBe('the certificate of tls.crt is expired or not yet valid');
  });

  test('the snapshot keeps the verdict and the key names, never the data', () => {
    const snapshot = buildSnapshot({ objects: [{ object: tlsSecret('c', 'ns', { 'tls.crt': cert, 'tls.key': otherKey }) }] });
    const [stored] = snapshot.inputs.Secret;
    expect(stored?.credentialProblem).toBe('tls.key does not match the certificate of tls.crt');
    const text = JSON.stringify(snapshot);
    for (const line of [...pemLines(cert), ...pemLines(otherKey)]) expect(text).not.toContain(line);
    expect(text).not.toContain(b64(otherKey).slice(0, 40));
  });
});

describe('gateway.SecretAnalyzer', () => {
  const gatewayPod = pod('ingress-1', 'mesh-system', { labels: { mesh: 'ingressgateway' } });
  const gw = gateway('g', 'foo', {
    selector: { mesh: 'ingressgateway' },
    servers: [{ port: { number: 443, name: 'https', protocol: 'HTTPS' }, hosts: ['*'], tls: { mode: 'SIMPLE', credentialName: 'cred' } }],
  });

  test('the credential must be in the gateway workload namespace, not the Gateway one', () => {
    expect(analyze(gatewaySecretAnalyzer, [gatewayPod, tlsSecret('cred', 'mesh-system', { 'tls.crt': cert, 'tls.key': key }), gw])).toEqual([]);
    expect(analyze(gatewaySecretAnalyzer, [gatewayPod, tlsSecret('cred', 'foo', { 'tls.crt': cert, 'tls.key': key }), gw])).toEqual([
      'Error [MSH0101] (Gateway g.foo) Referenced credentialName not found: "cred"',
    ]);
  });

  test.each([
    ['empty', () => tlsSecret('cred', 'mesh-system', { 'tls.crt': '', 'tls.key': '' }), new Date()],
    ['with a key of another certificate', () => tlsSecret('cred', 'mesh-system', { 'tls.crt': cert, 'tls.key': otherKey }), new Date()],
    ['expired', () => tlsSecret('cred', 'mesh-system', { 'tls.crt': cert, 'tls.key': key }), new Date(Date.now() + 3 * DAY)],
  ])('a credential %s is invalid, named by the workload namespace, without key material', (_case, secret, now) => {
    const lines = analyze(gatewaySecretAnalyzer, [gatewayPod, secret(), gw], { now });
    expect(lines).toEqual([
      'Error [MSH0161] (Gateway g.foo) The credential referenced by the Gateway g in namespace mesh-system is invalid, which can cause the traffic not to work as expected.',
    ]);
    for (const line of [...pemLines(key), ...pemLines(otherKey), ...pemLines(cert)]) expect(lines.join('\n')).not.toContain(line);
  });
});
