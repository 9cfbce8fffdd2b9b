import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import type { Credential } from '../model/credential-store.js';

/** Generic secrets: `cert`, `key`, `cacert`; TLS secrets (`kubernetes.io/tls`): `tls.crt`, `tls.key`, `ca.crt`. */
const GENERIC = { cert: 'cert', key: 'key', ca: 'cacert' } as const;
const TLS = { cert: 'tls.crt', key: 'tls.key', ca: 'ca.crt' } as const;
const KNOWN_KEYS: readonly string[] = [GENERIC.cert, GENERIC.key, GENERIC.ca, TLS.cert, TLS.key, TLS.ca];

export type SecretCredentialResult =
  | { readonly kind: 'credential'; readonly credential: Credential }
  /** Holds none of the keys above: not meant as a TLS credential. */
  | { readonly kind: 'not-tls' }
  /** Meant as one, but unusable: `field` names the offending key (`data.tls.key`). */
  | { readonly kind: 'invalid'; readonly field: string; readonly message: string };

interface SecretObject {
  metadata?: { namespace?: string; name?: string };
  data?: unknown;
  stringData?: unknown;
}

/**
 * The secret's data as text: `data` is base64, `stringData` plain and winning over `data` (as the
 * API server merges them on write; the config folder keeps both).
 */
function secretData(object: SecretObject): { values: Map<string, string>; bad?: string } {
  const values = new Map<string, string>();
  if (object.data && typeof object.data === 'object') {
    for (const [key, value] of Object.entries(object.data as Record<string, unknown>)) {
      if (typeof value !== 'string' || !/^[A-Za-z0-9+/=\s]*$/.test(value)) return { values, bad: `data.${key}` };
      values.set(key, Buffer.from(value, 'base64').toString('utf8'));
    }
  }
  if (object.stringData && typeof object.stringData === 'object') {
    for (const [key, value] of Object.entries(object.stringData as Record<string, unknown>)) {
      if (typeof value !== 'string') return { values, bad: `stringData.${key}` };
      values.set(key, value);
    }
  }
  return { values };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate of a PEM bundle, leaf first; undefined when there is none or one does not parse. */
function parseCertificates(pem: string): X509Certificate[] | undefined {
  const blocks = pem.match(PEM_CERTIFICATE);
  if (!blocks || blocks.length === 0) return undefined;
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    return undefined;
  }
}

function parsePrivateKey(pem: string): KeyObject | undefined {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) return undefined;
  try {
    return createPrivateKey(pem);
  } catch {
    return undefined;
  }
}

/**
 * Reads a Secret as the reference's credential controller does: `cert`/`key` first, else
 * `tls.crt`/`tls.key`; the CA from `cacert`, else `ca.crt`. Every PEM must parse and the key must
 * belong to the leaf certificate. Never logs or returns key material in its messages.
 */
export function parseSecretCredential(object: SecretObject): SecretCredentialResult {
  const namespace = object.metadata?.namespace ?? '';
  const name = object.metadata?.name ?? '';
  const { values, bad } = secretData(object);
  if (bad !== undefined) return { kind: 'invalid', field: bad, message: 'is not valid base64 text' };
  if (!KNOWN_KEYS.some((key) => values.has(key))) return { kind: 'not-tls' };

  const names = values.has(GENERIC.cert) || values.has(GENERIC.key) ? GENERIC : TLS;
  const cert = values.get(names.cert) ?? '';
  const key = values.get(names.key) ?? '';
  const caKey = values.get(GENERIC.ca) ? GENERIC.ca : TLS.ca;
  const ca = values.get(caKey) ?? '';
  const credential: { -readonly [K in keyof Credential]: Credential[K] } = { namespace, name };

  if (cert !== '' || key !== '') {
    if (cert === '') return { kind: 'invalid', field: `data.${names.cert}`, message: `is missing or empty (data.${names.key} is set)` };
    if (key === '') return { kind: 'invalid', field: `data.${names.key}`, message: `is missing or empty (data.${names.cert} is set)` };
    const chain = parseCertificates(cert);
    if (!chain) return { kind: 'invalid', field: `data.${names.cert}`, message: 'holds no parsable PEM certificate' };
    const privateKey = parsePrivateKey(key);
    if (!privateKey) return { kind: 'invalid', field: `data.${names.key}`, message: 'holds no parsable PEM private key' };
    const [leaf] = chain;
    if (!leaf?.checkPrivateKey(privateKey))
      return { kind: 'invalid', field: `data.${names.key}`, message: `does not match the certificate of data.${names.cert}` };
    credential.certificateChain = cert;
    credential.privateKey = key;
  }
  if (ca !== '') {
    if (!parseCertificates(ca)) return { kind: 'invalid', field: `data.${caKey}`, message: 'holds no parsable PEM certificate' };
    credential.caCertificate = ca;
  }
  if (credential.certificateChain === undefined && credential.caCertificate === undefined) {
    return { kind: 'invalid', field: `data.${names.cert}`, message: 'is missing: the secret has neither a certificate and key nor a CA certificate' };
  }
  return { kind: 'credential', credential };
}
