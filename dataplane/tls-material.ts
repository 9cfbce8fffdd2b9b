import { constants, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext, type PeerCertificate as NodePeerCertificate, type SecureContext } from 'node:tls';
import type { PeerCertificate, TlsContextSettings } from './decisions/index.js';
import type { SecretSet } from './sds-subscriber.js';
import { MeshError } from '../runtime/index.js';

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

/** A bound on the secure contexts kept (secrets rotate rarely; a full cache starts again). */
const MAX_SECURE_CONTEXTS = 32;

/**
 * Secure contexts cached by the PEM they were built from (secrets rotate rarely; handshakes are
 * many). Looked up by each PEM in turn: the secrets hand out the same string objects, whose hashes
 * V8 keeps, where a key joining them would be a new string of whole PEMs to hash on every call.
 */
export function newSecureContextCache(): (material: { cert?: string; key?: string; ca?: string }) => SecureContext {
  let cache = new Map<string, Map<string, Map<string, SecureContext>>>();
  let size = 0;
  return (material) => {
    const byKey = cache.get(material.cert ?? '');
    const byCa = byKey?.get(material.key ?? '');
    const cached = byCa?.get(material.ca ?? '');
    if (cached) return cached;
    if (size >= MAX_SECURE_CONTEXTS) {
      cache = new Map();
      size = 0;
    }
    // No session tickets: a server socket made outside a tls.Server has no ticket keys, and a
    // client resuming with a ticket would get an internal-error alert instead of a full handshake.
    const context = createSecureContext({ ...material, secureOptions: constants.SSL_OP_NO_TICKET });
    const keys = cache.get(material.cert ?? '') ?? new Map<string, Map<string, SecureContext>>();
    const cas = keys.get(material.key ?? '') ?? new Map<string, SecureContext>();
    cas.set(material.ca ?? '', context);
    keys.set(material.key ?? '', cas);
    cache.set(material.cert ?? '', keys);
    size++;
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
    pem: `-----BEGIN CERTIFICATE-----\n${certificate.raw
      .toString('base64')
      .replace(/(.{64})/g, '$1\n')
      .replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`,
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
