import { createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import {
  KEY_USAGE,
  NAME_OID,
  basicConstraintsExtension,
  buildCertificate,
  buildName,
  keyIdentifier,
  keyUsageExtension,
  randomSerial,
  subjectKeyIdExtension,
} from './certificate-builder.js';
import { parseCertificatesPem } from '../x509/certificate-info.js';
import type { CaMaterial } from './key-cert-bundle.js';
import { parsePrivateKey } from './key-cert-bundle.js';
import { encodePem } from '../../pki/index.js';
import { newCaSigner, type CaKeyType } from './signer.js';

const generateKeyPairAsync = promisify(generateKeyPair);

export interface CaKeyOptions {
  readonly keyType: CaKeyType;
  /** RSA modulus length (CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE). */
  readonly rsaKeySize: number;
}

export async function generateCaKey(options: CaKeyOptions): Promise<KeyObject> {
  const pair =
    options.keyType === 'rsa'
      ? await generateKeyPairAsync('rsa', { modulusLength: options.rsaKeySize })
      : await generateKeyPairAsync('ec', { namedCurve: 'P-256' });
  return pair.privateKey;
}

export interface RootCertOptions {
  readonly key: KeyObject;
  /** The subject Name DER; by default `O=<trust domain>`. */
  readonly subject?: Buffer;
  readonly trustDomain: string;
  readonly ttlMs: number;
  readonly nowMs: number;
}

/** A self-signed CA certificate for `key`, valid from now for the TTL. */
export function buildSelfSignedRoot(options: RootCertOptions): Buffer {
  const signer = newCaSigner(options.key);
  const spki = publicSpki(options.key);
  const name = options.subject ?? buildName([{ oid: NAME_OID.organization, value: options.trustDomain }]);
  return buildCertificate(
    {
      serial: randomSerial(),
      issuer: name,
      subject: name,
      notBeforeMs: options.nowMs,
      notAfterMs: options.nowMs + options.ttlMs,
      subjectPublicKeyInfo: spki,
      extensions: [keyUsageExtension([KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign]), basicConstraintsExtension(true), subjectKeyIdExtension(keyIdentifier(spki))],
    },
    signer,
  );
}

export interface SelfSignedOptions extends CaKeyOptions {
  readonly trustDomain: string;
  readonly ttlMs: number;
  readonly nowMs: number;
}

/** New self-signed CA material: a fresh key and root; the bundle holds that root alone. */
export async function newSelfSignedMaterial(options: SelfSignedOptions): Promise<CaMaterial> {
  const key = await generateCaKey(options);
  const rootPem = encodePem('CERTIFICATE', buildSelfSignedRoot({ ...options, key }));
  return {
    caCertPem: rootPem,
    caKeyPem: key.export({ format: 'pem', type: 'pkcs8' }).toString(),
    certChainPem: '',
    rootCertPem: rootPem,
  };
}

export interface RotateOptions {
  readonly trustDomain: string;
  readonly ttlMs: number;
  readonly nowMs: number;
}

/**
 * A new root for the same key and subject, first in the bundle; earlier roots stay until they
 * expire. Keeping the key means certificates signed before the rotation chain to the new root
 * too, and peers still holding only the old root accept certificates signed after it.
 */
export function rotateSelfSignedMaterial(current: CaMaterial, options: RotateOptions): CaMaterial {
  const key = parsePrivateKey(current.caKeyPem);
  const [currentRoot] = parseCertificatesPem(current.caCertPem, 'ca-cert.pem');
  const rootPem = encodePem('CERTIFICATE', buildSelfSignedRoot({ ...options, key, ...(currentRoot ? { subject: currentRoot.subject } : {}) }));
  const kept = parseCertificatesPem(current.rootCertPem, 'root-cert.pem').filter((r) => r.notAfterMs > options.nowMs);
  return {
    caCertPem: rootPem,
    caKeyPem: current.caKeyPem,
    certChainPem: '',
    rootCertPem: rootPem + kept.map((r) => r.pem).join(''),
  };
}

function publicSpki(key: KeyObject): Buffer {
  return createPublicKey(key).export({ format: 'der', type: 'spki' });
}
