import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { newMetrics, newNopLogger } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { CaError } from '../ca-error.js';
import { buildCsr } from '../x509/csr-builder.js';
import { newFolderCaStore } from '../store/folder-ca-store.js';
import { loadKeyCertBundle } from './key-cert-bundle.js';
import { newMeshCa } from './new-mesh-ca.js';
import { readPluggedCa } from './plugged-ca.js';
import { daemonSettings, openssl, opensslVerify, removeDir, tempDir } from '../testing/test-support.js';
import { meshCaSettingsFromSettings } from '../ca-settings.js';

const WEB = 'spiffe://cluster.local/ns/apps/sa/web';

const CA_EXTENSIONS = `[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
`;

interface OpensslChain {
  rootCert: string;
  int1Cert: string;
  int2Cert: string;
  int2Key: string;
  int1Key: string;
}

/** root -> intermediate 1 -> intermediate 2 (the signing CA), made by the openssl CLI. */
async function makeChain(dir: string): Promise<OpensslChain> {
  const run = async (args: string[]): Promise<void> => {
    const result = await openssl(args, dir);
    if (!result.ok) throw new Error(`openssl ${args.join(' ')}: ${result.output}`);
  };
  await writeFile(join(dir, 'ext.cnf'), CA_EXTENSIONS);
  const ecKey = (name: string): Promise<void> => run(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', name]);
  await ecKey('root-key.pem');
  await run([
    'req',
    '-x509',
    '-new',
    '-sha256',
    '-key',
    'root-key.pem',
    '-subj',
    '/O=Mesh Test/CN=Root CA',
    '-days',
    '3650',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-out',
    'root-cert.pem',
  ]);
  let serial = 1000;
  const intermediate = async (name: string, issuer: string): Promise<void> => {
    await ecKey(`${name}-key.pem`);
    await run(['req', '-new', '-sha256', '-key', `${name}-key.pem`, '-subj', `/O=Mesh Test/CN=${name}`, '-out', `${name}.csr`]);
    await run([
      'x509',
      '-req',
      '-sha256',
      '-in',
      `${name}.csr`,
      '-CA',
      `${issuer}-cert.pem`,
      '-CAkey',
      `${issuer}-key.pem`,
      '-set_serial',
      String(serial++),
      '-days',
      '1825',
      '-extfile',
      'ext.cnf',
      '-extensions',
      'v3_ca',
      '-out',
      `${name}-cert.pem`,
    ]);
  };
  await intermediate('int1', 'root');
  await intermediate('int2', 'int1');
  const read = (name: string): Promise<string> => readFile(join(dir, name), 'utf8');
  return {
    rootCert: await read('root-cert.pem'),
    int1Cert: await read('int1-cert.pem'),
    int2Cert: await read('int2-cert.pem'),
    int2Key: await read('int2-key.pem'),
    int1Key: await read('int1-key.pem'),
  };
}

describe('plugged-in CA with an intermediate chain made by openssl', () => {
  let dir: string;
  let chain: OpensslChain;
  let cacerts: string;

  beforeAll(async () => {
    dir = await tempDir();
    chain = await makeChain(dir);
    cacerts = join(dir, 'cacerts');
    await mkdir(cacerts);
    await writeFile(join(cacerts, 'ca-cert.pem'), chain.int2Cert);
    await writeFile(join(cacerts, 'ca-key.pem'), chain.int2Key);
    await writeFile(join(cacerts, 'cert-chain.pem'), chain.int2Cert + chain.int1Cert + chain.rootCert);
    await writeFile(join(cacerts, 'root-cert.pem'), chain.rootCert);
  });

  afterAll(async () => {
    await removeDir(dir);
  });

  test('the daemon uses it and issues chains openssl verifies against the root', async () => {
    const clock = new FakeClock(Date.now());
    const metrics = newMetrics('pilot-discovery');
    const mesh = await newMeshCa({
      caSettings: meshCaSettingsFromSettings(daemonSettings({ ROOT_CA_DIR: cacerts })),
      log: newNopLogger('pkica'),
      metrics,
      clock,
      selfSignedStore: newFolderCaStore(join(dir, 'unused')),
      selfSignedKeyType: 'ecdsa-p256',
    });
    expect(mesh?.mode).toBe('plugged');
    expect(mesh?.rotator).toBeUndefined();
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const issued = mesh!.authority.signCsr(buildCsr({ key }), WEB, 0);
    const norm = (pem: string): string => new X509Certificate(pem).fingerprint256;
    expect(issued.certChainPem.map(norm)).toEqual([norm(issued.certPem), norm(chain.int2Cert), norm(chain.int1Cert), norm(chain.rootCert)]);
    expect(await opensslVerify(dir, { roots: chain.rootCert, untrusted: chain.int2Cert + chain.int1Cert, leaf: issued.certPem })).toMatchObject({ ok: true });
    // Without the intermediates the leaf does not verify: the chain matters.
    expect(await opensslVerify(dir, { roots: chain.rootCert, leaf: issued.certPem })).toMatchObject({ ok: false });
    const leaf = new X509Certificate(issued.certPem);
    expect(leaf.issuer).toContain('CN=int2');
    expect(leaf.subjectAltName).toBe(`URI:${WEB}`);

    const expiry = (name: 'ca_server_root_cert_expiry_timestamp' | 'ca_server_cert_chain_expiry_timestamp') =>
      metrics
        .gauge(name)
        .get()
        .then((g) => g.values[0]?.value);
    const seconds = (pem: string): number => Math.floor(Date.parse(new X509Certificate(pem).validTo) / 1000);
    expect(await expiry('ca_server_root_cert_expiry_timestamp')).toBe(seconds(chain.rootCert));
    expect(await expiry('ca_server_cert_chain_expiry_timestamp')).toBe(Math.min(seconds(chain.int1Cert), seconds(chain.int2Cert)));
  });

  test('cert-chain.pem without the root works the same', () => {
    const bundle = loadKeyCertBundle({
      caCertPem: chain.int2Cert,
      caKeyPem: chain.int2Key,
      certChainPem: chain.int2Cert + chain.int1Cert,
      rootCertPem: chain.rootCert,
    });
    expect(bundle.intermediates.map((c) => c.x509.subject)).toEqual(['O=Mesh Test\nCN=int2', 'O=Mesh Test\nCN=int1']);
  });

  test.each([
    [
      'a missing intermediate',
      (c: OpensslChain) => ({ caCertPem: c.int2Cert, caKeyPem: c.int2Key, certChainPem: c.int2Cert, rootCertPem: c.rootCert }),
      /does not lead to a root/,
    ],
    [
      'a key of another certificate',
      (c: OpensslChain) => ({ caCertPem: c.int1Cert, caKeyPem: c.int2Key, certChainPem: c.int1Cert, rootCertPem: c.rootCert }),
      /does not match/,
    ],
    [
      'a chain certificate that did not issue the one before',
      (c: OpensslChain) => ({ caCertPem: c.int1Cert, caKeyPem: c.int1Key, certChainPem: c.int1Cert + c.int2Cert, rootCertPem: c.rootCert }),
      /did not issue/,
    ],
    [
      'no root',
      (c: OpensslChain) => ({ caCertPem: c.int2Cert, caKeyPem: c.int2Key, certChainPem: c.int2Cert + c.int1Cert, rootCertPem: '' }),
      /no PEM certificate/,
    ],
  ])('refused: %s', (_name, material, message) => {
    let error: unknown;
    try {
      loadKeyCertBundle(material(chain));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(CaError);
    expect((error as CaError).code).toBe('ca-material-invalid');
    expect((error as CaError).message).toMatch(message);
  });

  test('a folder with a key but no root is an error; an empty one means no plugged CA', async () => {
    const partial = join(dir, 'partial');
    await mkdir(partial);
    await writeFile(join(partial, 'ca-key.pem'), chain.int2Key);
    await writeFile(join(partial, 'ca-cert.pem'), chain.int2Cert);
    await expect(readPluggedCa(partial)).rejects.toThrow(/root-cert.pem/);
    expect(await readPluggedCa(join(dir, 'does-not-exist'))).toBeUndefined();
  });
});
