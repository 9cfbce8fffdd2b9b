import { CaError } from '../ca-error.js';
import { parseCertificate, type CertificateInfo } from '../x509/certificate-info.js';
import { decodePemBlocks } from '../../pki/index.js';

/** The X.509 part of a SPIFFE trust bundle. */
export interface SpiffeBundle {
  /** The X.509 authorities: trust anchors for the domain's X509-SVIDs. */
  readonly roots: readonly CertificateInfo[];
  /** `spiffe_refresh_hint`, in milliseconds, when the bundle sets a positive one. */
  readonly refreshHintMs?: number;
  /** `spiffe_sequence`, when set. */
  readonly sequence?: number;
  /** JWK entries ignored: other uses (`jwt-svid`), unknown key types, unreadable certificates. */
  readonly ignoredKeys: number;
}

const KEY_TYPES = new Set(['RSA', 'EC', 'OKP']);

/**
 * Parses what a bundle endpoint served: a SPIFFE bundle (a JWK set whose `x509-svid` keys
 * carry their authority in `x5c`), or plain PEM certificates. Entries the SPIFFE spec says to
 * ignore are ignored; a bundle left without any X.509 authority is an error.
 */
export function parseSpiffeBundle(text: string): SpiffeBundle {
  const bundle = text.trimStart().startsWith('{') ? parseJwks(text) : parsePem(text);
  if (bundle.roots.length === 0) throw new CaError('ca-material-invalid', 'the trust bundle holds no X.509 authority');
  return bundle;
}

function parsePem(text: string): SpiffeBundle {
  const blocks = decodePemBlocks(text).filter((b) => b.label === 'CERTIFICATE');
  if (blocks.length === 0) throw new CaError('ca-material-invalid', 'the trust bundle is neither a JWK set nor PEM certificates');
  const roots = blocks.map((b) => parseCertificate(b.der));
  if (roots.some((r) => !r.isCa)) throw new CaError('ca-material-invalid', 'the PEM trust bundle holds a certificate that is not a CA');
  return { roots, ignoredKeys: 0 };
}

function parseJwks(text: string): SpiffeBundle {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CaError('ca-material-invalid', 'the trust bundle is not valid JSON', { cause: err });
  }
  if (!isObject(doc) || !Array.isArray(doc['keys'])) throw new CaError('ca-material-invalid', 'the trust bundle has no "keys" array');
  const roots: CertificateInfo[] = [];
  let ignoredKeys = 0;
  for (const key of doc['keys']) {
    const root = isObject(key) ? x509Authority(key) : undefined;
    if (root) roots.push(root);
    else ignoredKeys++;
  }
  const hint = doc['spiffe_refresh_hint'];
  const sequence = doc['spiffe_sequence'];
  return {
    roots,
    ignoredKeys,
    ...(typeof hint === 'number' && Number.isFinite(hint) && hint > 0 ? { refreshHintMs: Math.round(hint * 1000) } : {}),
    ...(typeof sequence === 'number' && Number.isFinite(sequence) ? { sequence } : {}),
  };
}

/** The authority of an `x509-svid` JWK: exactly one CA certificate in `x5c` (standard base64 DER). */
function x509Authority(key: Record<string, unknown>): CertificateInfo | undefined {
  if (key['use'] !== 'x509-svid' || typeof key['kty'] !== 'string' || !KEY_TYPES.has(key['kty'])) return undefined;
  const x5c = key['x5c'];
  if (!Array.isArray(x5c) || x5c.length !== 1 || typeof x5c[0] !== 'string') return undefined;
  try {
    const cert = parseCertificate(Buffer.from(x5c[0], 'base64'));
    return cert.isCa ? cert : undefined;
  } catch {
    return undefined;
  }
}

export interface BuildSpiffeBundleOptions {
  readonly refreshHintSeconds?: number;
  readonly sequence?: number;
}

/** A SPIFFE bundle (JWK set) of X.509 authorities, as a bundle endpoint serves it. */
export function buildSpiffeBundle(roots: readonly CertificateInfo[], options: BuildSpiffeBundleOptions = {}): string {
  const keys = roots.map((root) => {
    const { kty, n, e, crv, x, y } = root.x509.publicKey.export({ format: 'jwk' });
    return { kty, use: 'x509-svid', x5c: [root.der.toString('base64')], ...(n ? { n, e } : {}), ...(crv ? { crv, x, y } : {}) };
  });
  return JSON.stringify({
    ...(options.sequence === undefined ? {} : { spiffe_sequence: options.sequence }),
    ...(options.refreshHintSeconds === undefined ? {} : { spiffe_refresh_hint: options.refreshHintSeconds }),
    keys,
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
