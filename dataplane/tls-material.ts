import { constants, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext, type PeerCertificate as NodePeerCertificate, type SecureContext } from 'node:tls';
import type { PeerCertificate, TlsContextSettings } from './decisions/index.js';
import type { SecretSet } from './sds-subscriber.js';
import { MeshError } from '../controllers/runtime/index.js';

export class MissingSecretError extends MeshError<'secret-missing'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('secret-missing', message, options);
  }
}

/** A data source as decoded: inline text, or `file:<path>` read when used (files rotate on disk). */
function sourceText(value: string): string {
  return value.startsWith('file:') ? readFileSync(value.slice('file:'.length), 'utf8') : value;
}

/** Key, certificate chain and trust bundle a TLS context names, taken from SDS secrets, inline data or files. */
export function tlsMaterialFor(settings: TlsContextSettings, secrets: SecretSet): { cert?: string; key?: string; ca?: string } {
  const material: { cert?: string; key?: string; ca?: string } = {};
  const [secretName] = settings.certificateSecrets;
  if (secretName !== undefined) {
    const certificate = secrets.certificates.get(secretName);
    if (!certificate) throw new MissingSecretError(`secret "${secretName}" is not available yet`);
    material.cert = certificate.certificateChain;
    material.key = certificate.privateKey;
  } else if (settings.inlineCertificates[0]) {
    material.cert = sourceText(settings.inlineCertificates[0].certificateChain);
    material.key = sourceText(settings.inlineCertificates[0].privateKey);
  }
  if (settings.validationSecret !== undefined) {
    const ca = secrets.trustedCas.get(settings.validationSecret);
    if (!ca) throw new MissingSecretError(`secret "${settings.validationSecret}" is not available yet`);
    material.ca = ca;
  } else if (settings.trustedCa !== undefined) material.ca = sourceText(settings.trustedCa);
  return material;
}

/** Secure contexts cached by the PEM they were built from (secrets rotate rarely; handshakes are many). */
export function newSecureContextCache(): (material: { cert?: string; key?: string; ca?: string }) => SecureContext {
  let cache = new Map<string, SecureContext>();
  return (material) => {
    const key = `${material.cert ?? ''}\0${material.key ?? ''}\0${material.ca ?? ''}`;
    let context = cache.get(key);
    if (!context) {
      if (cache.size > 32) cache = new Map();
      // No session tickets: a server socket made outside a tls.Server has no ticket keys, and a
      // client resuming with a ticket would get an internal-error alert instead of a full handshake.
      context = createSecureContext({ ...material, secureOptions: constants.SSL_OP_NO_TICKET });
      cache.set(key, context);
    }
    return context;
  };
}

function subjectText(subject: NodePeerCertificate['subject'] | undefined): string {
  if (!subject) return '';
  return Object.entries(subject)
    .reverse()
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join('+') : String(value)}`)
    .join(',');
}

/** The facts a decision needs about a verified peer certificate. */
export function peerCertificateFacts(certificate: NodePeerCertificate): PeerCertificate | undefined {
  if (!certificate || !certificate.raw) return undefined;
  const sans = (certificate.subjectaltname ?? '').split(', ').filter((entry) => entry !== '');
  return {
    uriSans: sans.filter((entry) => entry.startsWith('URI:')).map((entry) => entry.slice(4)),
    dnsSans: sans.filter((entry) => entry.startsWith('DNS:')).map((entry) => entry.slice(4)),
    subject: subjectText(certificate.subject),
    sha256: (certificate.fingerprint256 ?? '').replace(/:/g, '').toLowerCase(),
    pem: `-----BEGIN CERTIFICATE-----\n${certificate.raw.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`,
  };
}

/** The first URI SAN of a PEM certificate chain's leaf (this proxy's identity, XFCC `By`). */
export function leafUriSan(chainPem: string): string | undefined {
  try {
    const leaf = new X509Certificate(chainPem);
    return leaf.subjectAltName
      ?.split(', ')
      .find((entry) => entry.startsWith('URI:'))
      ?.slice(4);
  } catch {
    return undefined;
  }
}
