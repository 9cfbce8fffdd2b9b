import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildCsr } from './csr-builder.js';
import { csrRequestedNames } from './csr-requested-names.js';
import { openssl, removeDir, tempDir } from '../testing/test-support.js';

describe('the names a CSR asks for', () => {
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  let dir: string;

  beforeAll(async () => {
    dir = await tempDir();
  });
  afterAll(async () => {
    await removeDir(dir);
  });

  test('our own CSRs: URIs, DNS names and IPs in order; none without a subjectAltName', () => {
    const csr = buildCsr({
      key,
      commonName: 'web',
      sans: { uris: ['spiffe://cluster.local/ns/a/sa/b'], dnsNames: ['web.a.svc'], ips: ['10.0.0.7', '2001:db8::1'] },
    });
    expect(csrRequestedNames(csr)).toEqual([
      { type: 'dns', value: 'web.a.svc' },
      { type: 'uri', value: 'spiffe://cluster.local/ns/a/sa/b' },
      { type: 'ip', value: '10.0.0.7' },
      { type: 'ip', value: '2001:db8:0:0:0:0:0:1' },
    ]);
    expect(csrRequestedNames(buildCsr({ key, commonName: 'web' }))).toEqual([]);
  });

  test('a CSR made by openssl with several extensions', async () => {
    await writeFile(join(dir, 'key.pem'), key.export({ format: 'pem', type: 'pkcs8' }));
    const result = await openssl(
      [
        'req',
        '-new',
        '-key',
        'key.pem',
        '-subj',
        '/O=mesh/CN=web',
        '-out',
        'req.pem',
        '-addext',
        'keyUsage=digitalSignature',
        '-addext',
        'subjectAltName=URI:spiffe://td1/ns/a/sa/b,email:ops@example.com,DNS:web.example.com',
      ],
      dir,
    );
    expect(result).toMatchObject({ ok: true });
    expect(csrRequestedNames(await readFile(join(dir, 'req.pem'), 'utf8'))).toEqual([
      { type: 'uri', value: 'spiffe://td1/ns/a/sa/b' },
      { type: 'email', value: 'ops@example.com' },
      { type: 'dns', value: 'web.example.com' },
    ]);
  });

  test.each([
    ['no PEM block', 'garbage'],
    ['a truncated request', '-----BEGIN CERTIFICATE REQUEST-----\nMIIBAAAA\n-----END CERTIFICATE REQUEST-----\n'],
  ])('%s is csr-malformed', (_name, pem) => {
    expect(() => csrRequestedNames(pem)).toThrow(expect.objectContaining({ code: 'csr-malformed' }));
  });
});
