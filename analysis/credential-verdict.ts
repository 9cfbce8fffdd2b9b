import type { V1Secret } from '@kubernetes/client-node';
import { createPrivateKey, X509Certificate } from 'node:crypto';

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/;

/** The Secret's data as bytes: `data` base64, `stringData` plain and winning, as the API server merges them on write. */
function secretData(secret: V1Secret): Map<string, Buffer> {
  const values = new Map<string, Buffer>();
  for (const [key, value] of Object.entries(secret.data ?? {})) if (typeof value === 'string') values.set(key, Buffer.from(value, 'base64'));
  for (const [key, value] of Object.entries(secret.stringData ?? {})) if (typeof value === 'string') values.set(key, Buffer.from(value, 'utf8'));
  return values;
}

/** The first certificate of the first PEM block, as the reference reads it; undefined when it does not parse. */
function firstCertificate(pem: string): X509Certificate | undefined {
  const block = PEM_BLOCK.exec(pem);
  if (block === null || block[1] !== 'CERTIFICATE') return undefined;
  try {
    return new X509Certificate(Buffer.from(block[2] ?? '', 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * Why a Secret cannot serve as a gateway's TLS credential at `now`, or undefined when it can. As
 * the reference checks: `cert`/`key` both set, else `tls.crt`/`tls.key`; the certificate parses
 * and is within its validity period. Beyond the reference: the key parses and belongs to the
 * certificate (the proxy rejects the credential otherwise). Fixed texts only: never key material.
 */
export function credentialProblem(secret: V1Secret, now: Date): string | undefined {
  const data = secretData(secret);
  const pair = [
    ['cert', 'key'],
    ['tls.crt', 'tls.key'],
  ].find(([cert = '', key = '']) => (data.get(cert)?.length ?? 0) > 0 && (data.get(key)?.length ?? 0) > 0);
  if (pair === undefined) return 'no certificate and key: expected non-empty cert and key, or tls.crt and tls.key';
  const [certKey = '', keyKey = ''] = pair;
  const certificate = firstCertificate(data.get(certKey)?.toString('utf8') ?? '');
  if (certificate === undefined) return `${certKey} holds no parsable PEM certificate`;
  if (now.getTime() > Date.parse(certificate.validTo) || now.getTime() < Date.parse(certificate.validFrom)) {
    return `the certificate of ${certKey} is expired or not yet valid`;
  }
  let matches: boolean;
  try {
    matches = certificate.checkPrivateKey(createPrivateKey(data.get(keyKey) ?? Buffer.alloc(0)));
  } catch {
    return `${keyKey} holds no parsable private key`;
  }
  return matches ? undefined : `${keyKey} does not match the certificate of ${certKey}`;
}
