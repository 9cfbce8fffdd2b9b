/** Certificates made with the real openssl, as an attacker (or an operator) would make them. */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface KeyAndCert {
  readonly keyFile: string;
  readonly certFile: string;
}

/** A self-signed P-256 certificate with the given SANs (`URI:spiffe://…`, `DNS:…`), outside any CA of the mesh. */
export async function selfSignedCertificate(dir: string, name: string, subjectAltName: string, extra: readonly string[] = []): Promise<KeyAndCert> {
  const keyFile = join(dir, `${name}.key`);
  const certFile = join(dir, `${name}.pem`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '1',
    '-subj',
    `/O=not-the-mesh/CN=${name}`,
    '-addext',
    `subjectAltName=${subjectAltName}`,
    ...extra,
  ]);
  return { keyFile, certFile };
}

/** A self-signed CA (basicConstraints CA:TRUE) to sign further certificates with. */
export async function certificateAuthority(dir: string, name: string): Promise<KeyAndCert> {
  return selfSignedCertificate(dir, name, `URI:spiffe://${name}`, [
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

const LEAF_EXTENSIONS = 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n';
const CA_EXTENSIONS = 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n';

/** A P-256 leaf with the given SANs signed by `issuer`. */
export async function signedCertificate(dir: string, name: string, subjectAltName: string, issuer: KeyAndCert): Promise<KeyAndCert> {
  return issue(dir, name, `subjectAltName=${subjectAltName}\n${LEAF_EXTENSIONS}`, issuer);
}

/** An intermediate CA signed by `issuer`; its `certFile` holds only itself. */
export async function intermediateAuthority(dir: string, name: string, issuer: KeyAndCert): Promise<KeyAndCert> {
  return issue(dir, name, CA_EXTENSIONS, issuer);
}

async function issue(dir: string, name: string, extensions: string, issuer: KeyAndCert): Promise<KeyAndCert> {
  const keyFile = join(dir, `${name}.key`);
  const csrFile = join(dir, `${name}.csr`);
  const certFile = join(dir, `${name}.pem`);
  const extFile = join(dir, `${name}.ext`);
  writeFileSync(extFile, extensions);
  await run('openssl', [
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    csrFile,
    '-subj',
    `/O=mesh/CN=${name}`,
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csrFile,
    '-CA',
    issuer.certFile,
    '-CAkey',
    issuer.keyFile,
    // A random serial, not a serial file beside the CA: certificates signed at once by one CA would race on that file.
    '-set_serial',
    `0x${randomBytes(16).toString('hex')}`,
    '-out',
    certFile,
    '-days',
    '1',
    '-extfile',
    extFile,
  ]);
  return { keyFile, certFile };
}
