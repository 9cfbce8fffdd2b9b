import { MeshError } from '../runtime/index.js';

/** PEM blocks: `-----BEGIN <label>-----`, base64 in 64-character lines, `-----END <label>-----`. */
export interface PemBlock {
  readonly label: string;
  readonly der: Buffer;
}

export function encodePem(label: string, der: Buffer): string {
  const base64 = der.toString('base64');
  let body = '';
  for (let i = 0; i < base64.length; i += 64) body += `${base64.slice(i, i + 64)}\n`;
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([A-Za-z0-9+/=\r\n\t ]*?)-----END \1-----/g;

/** Every PEM block of `text`, in order; text between blocks is ignored. */
export function decodePemBlocks(text: string): PemBlock[] {
  const out: PemBlock[] = [];
  for (const m of text.matchAll(BLOCK)) {
    out.push({ label: m[1]!, der: Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64') });
  }
  return out;
}

/** The DER of every CERTIFICATE block; throws when there is none. */
export function decodeCertificates(text: string, what: string): Buffer[] {
  const certs = decodePemBlocks(text)
    .filter((b) => b.label === 'CERTIFICATE')
    .map((b) => b.der);
  if (certs.length === 0) throw new MeshError('pem', `${what}: no PEM certificate found`);
  return certs;
}
