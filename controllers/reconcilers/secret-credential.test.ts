import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { certificateAuthority, signedCertificate } from '../../testing/openssl.js';
import { parseSecretCredential } from './secret-credential.js';

let dir: string;
let ca: string;
let cert: string;
let key: string;
let otherKey: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mesh-secret-'));
  const authority = await certificateAuthority(dir, 'ca');
  const [leaf, other] = await Promise.all([
    signedCertificate(dir, 'leaf', 'DNS:a.example.com', authority),
    signedCertificate(dir, 'other', 'DNS:b.example.com', authority),
  ]);
  [ca, cert, key, otherKey] = await Promise.all([
    readFile(authority.certFile, 'utf8'),
    readFile(leaf.certFile, 'utf8'),
    readFile(leaf.keyFile, 'utf8'),
    readFile(other.keyFile, 'utf8'),
  ]);
});

afterAll(() => rm(dir, { recursive: true, force: true }));

const b64 = (value: string): string => Buffer.from(value).toString('base64');
const secret = (data: Record<string, string>, stringData?: Record<string, string>) => ({
  metadata: { namespace: 'foo', name: 'cred' },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  ...(stringData ? { stringData } : {}),
});

describe('parseSecretCredential', () => {
  test('TLS keys (tls.crt, tls.key, ca.crt)', () => {
    const result = parseSecretCredential(secret({ 'tls.crt': cert, 'tls.key': key, 'ca.crt': ca }));
    expect(result).toEqual({ kind: 'credential', credential: { namespace: 'foo', name: 'cred', certificateChain: cert, privateKey: key, caCertificate: ca } });
  });

  test('generic keys (cert, key, cacert), and stringData as the config folder writes it', () => {
    const result = parseSecretCredential(secret({ cert }, { key, cacert: ca }));
    expect(result).toEqual({ kind: 'credential', credential: { namespace: 'foo', name: 'cred', certificateChain: cert, privateKey: key, caCertificate: ca } });
  });

  test('a CA alone (the <name>-cacert secret)', () => {
    expect(parseSecretCredential(secret({ 'ca.crt': ca }))).toEqual({ kind: 'credential', credential: { namespace: 'foo', name: 'cred', caCertificate: ca } });
  });

  test('a secret with none of the keys is not a credential', () => {
    expect(parseSecretCredential(secret({ token: 'x' }))).toEqual({ kind: 'not-tls' });
  });

  test.each([
    ['the key missing', () => secret({ 'tls.crt': cert }), 'data.tls.key', 'missing'],
    ['the certificate missing', () => secret({ 'tls.key': key }), 'data.tls.crt', 'missing'],
    [
      'an unparsable certificate',
      () => secret({ 'tls.crt': '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n', 'tls.key': key }),
      'data.tls.crt',
      'parsable',
    ],
    ['an unparsable key', () => secret({ 'tls.crt': cert, 'tls.key': 'junk' }), 'data.tls.key', 'parsable'],
    ['a key of another certificate', () => secret({ 'tls.crt': cert, 'tls.key': otherKey }), 'data.tls.key', 'does not match'],
    ['an unparsable CA', () => secret({ 'tls.crt': cert, 'tls.key': key, 'ca.crt': 'junk' }), 'data.ca.crt', 'parsable'],
    ['data that is not base64', () => ({ metadata: { namespace: 'foo', name: 'cred' }, data: { 'tls.crt': '%%%' } }), 'data.tls.crt', 'base64'],
  ])('%s is refused, naming the field', (_name, make, field, words) => {
    const result = parseSecretCredential(make());
    expect(result.kind).toBe('invalid');
    if (result.kind !== 'invalid') return;
    expect(result.field).toBe(field);
    expect(result.message).toContain(words);
    expect(result.message).not.toContain('PRIVATE KEY');
  });
});
