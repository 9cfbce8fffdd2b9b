import { createPrivateKey, type KeyObject } from 'node:crypto';
import { CaError } from '../ca-error.js';
import { parseCertificatesPem, type CertificateInfo } from '../x509/certificate-info.js';
import { newCaSigner, type CaSigner } from './signer.js';

/** The CA as stored: the four PEM files of the `cacerts` folder and of the `mesh-ca-secret` secret. */
export interface CaMaterial {
  /** The signing certificate (`ca-cert.pem`): the root itself when self-signed. */
  readonly caCertPem: string;
  /** Its private key (`ca-key.pem`). */
  readonly caKeyPem: string;
  /** `cert-chain.pem`: the signing certificate and intermediates up to the root; empty when self-signed. */
  readonly certChainPem: string;
  /** `root-cert.pem`: the trust bundle, one or more roots (the current one first). */
  readonly rootCertPem: string;
}

/** Validated CA material, parsed once; an immutable snapshot that rotation replaces whole. */
export interface KeyCertBundle {
  readonly material: CaMaterial;
  readonly signingCert: CertificateInfo;
  readonly signer: CaSigner;
  /** From the signing certificate up, roots excluded: empty when the signing certificate is a root. */
  readonly intermediates: readonly CertificateInfo[];
  readonly roots: readonly CertificateInfo[];
  /** Every root, PEM, concatenated: what workloads trust. */
  readonly rootBundlePem: string;
  /** When the signing chain (signing certificate and intermediates) first expires. */
  readonly chainExpiryMs: number;
  /** When the root the chain anchors in expires. */
  readonly rootExpiryMs: number;
}

const MAX_CHAIN_LENGTH = 8;

/** Parses and checks CA material: key matches certificate, the chain links up to a root of the bundle. */
export function loadKeyCertBundle(material: CaMaterial): KeyCertBundle {
  const key = parsePrivateKey(material.caKeyPem);
  const [signingCert] = parseCertificatesPem(material.caCertPem, 'ca-cert.pem');
  if (!signingCert) throw new CaError('ca-material-invalid', 'ca-cert.pem holds no certificate');
  if (!signingCert.isCa) throw new CaError('ca-material-invalid', 'ca-cert.pem is not a CA certificate');
  if (!signingCert.x509.checkPrivateKey(key)) throw new CaError('ca-material-invalid', 'ca-key.pem does not match ca-cert.pem');
  const roots = parseCertificatesPem(material.rootCertPem, 'root-cert.pem');
  for (const root of roots) {
    if (!root.isCa) throw new CaError('ca-material-invalid', 'root-cert.pem holds a certificate that is not a CA');
  }
  const isRoot = (c: CertificateInfo): boolean => c.isSelfSigned || roots.some((r) => r.der.equals(c.der));
  const chainCerts = material.certChainPem.trim() === '' ? [] : parseCertificatesPem(material.certChainPem, 'cert-chain.pem');
  const intermediates = isRoot(signingCert) ? [] : [signingCert, ...chainCerts.filter((c) => !c.der.equals(signingCert.der) && !isRoot(c))];
  if (intermediates.length > MAX_CHAIN_LENGTH) throw new CaError('ca-material-invalid', 'cert-chain.pem is too long');

  for (let i = 1; i < intermediates.length; i++) {
    if (!issued(intermediates[i]!, intermediates[i - 1]!)) {
      throw new CaError('ca-material-invalid', `cert-chain.pem: certificate ${i} did not issue certificate ${i - 1}`);
    }
  }
  const top = intermediates[intermediates.length - 1] ?? signingCert;
  const anchor = isRoot(top) ? (roots.find((r) => r.der.equals(top.der)) ?? top) : roots.find((r) => issued(r, top));
  if (!anchor) throw new CaError('ca-material-invalid', 'the CA chain does not lead to a root of root-cert.pem');
  if (!roots.some((r) => r.der.equals(anchor.der))) {
    throw new CaError('ca-material-invalid', 'the self-signed ca-cert.pem is not in root-cert.pem');
  }
  const signingChain = intermediates.length > 0 ? intermediates : [signingCert];
  return {
    material,
    signingCert,
    signer: newCaSigner(key),
    intermediates,
    roots,
    rootBundlePem: roots.map((r) => r.pem).join(''),
    chainExpiryMs: Math.min(...signingChain.map((c) => c.notAfterMs)),
    rootExpiryMs: anchor.notAfterMs,
  };
}

export function parsePrivateKey(pem: string): KeyObject {
  try {
    return createPrivateKey({ key: pem, format: 'pem' });
  } catch (err) {
    throw new CaError('ca-material-invalid', 'ca-key.pem is not a readable private key', { cause: err });
  }
}

function issued(issuer: CertificateInfo, child: CertificateInfo): boolean {
  return issuer.isCa && issuer.subject.equals(child.issuer) && child.x509.verify(issuer.x509.publicKey);
}
