/**
 * What the listener filters learn from a connection's first bytes: tls_inspector (a TLS
 * ClientHello, its SNI and ALPN) and http_inspector (HTTP/1.x or the HTTP/2 preface).
 */
export type SniffResult =
  | { readonly kind: 'need-more' }
  | { readonly kind: 'tls'; readonly serverName?: string; readonly applicationProtocols: readonly string[] }
  | { readonly kind: 'plain'; readonly applicationProtocols: readonly string[] };

/** A ClientHello larger than this is not waited for (Envoy's inspector reads at most 64 KiB). */
export const MAX_SNIFF_BYTES = 64 * 1024;
const H2_PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';
const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const EXTENSION_SERVER_NAME = 0x0000;
const EXTENSION_ALPN = 0x0010;

function sniffHttp(data: Buffer, complete: boolean): SniffResult {
  const text = data.subarray(0, Math.min(data.length, 2048)).toString('latin1');
  if (H2_PREFACE.startsWith(text) && !complete && text.length < H2_PREFACE.length) return { kind: 'need-more' };
  if (text.startsWith(H2_PREFACE)) return { kind: 'plain', applicationProtocols: ['h2c'] };
  const lineEnd = text.indexOf('\r\n');
  if (lineEnd < 0) {
    // A request line still arriving: wait while it still looks like one.
    if (!complete && /^[A-Z]{1,16}( \S*)?( H(T(T(P(\/(1(\.[01]?)?)?)?)?)?)?)?$/.test(text) && data.length < 2048) return { kind: 'need-more' };
    return { kind: 'plain', applicationProtocols: [] };
  }
  const version = /^[A-Z]+ \S+ HTTP\/1\.([01])$/.exec(text.slice(0, lineEnd));
  if (!version) return { kind: 'plain', applicationProtocols: [] };
  return { kind: 'plain', applicationProtocols: [version[1] === '0' ? 'http/1.0' : 'http/1.1'] };
}

/** Reads the SNI and ALPN extensions of a ClientHello; undefined when the bytes are not one. */
function parseClientHello(hello: Buffer): { serverName?: string; applicationProtocols: string[] } | undefined {
  let at = 4 + 2 + 32; // handshake header, client_version, random
  const need = (n: number): boolean => at + n <= hello.length;
  if (!need(1)) return undefined;
  at += 1 + (hello[at] as number); // session id
  if (!need(2)) return undefined;
  at += 2 + hello.readUInt16BE(at); // cipher suites
  if (!need(1)) return undefined;
  at += 1 + (hello[at] as number); // compression methods
  const result: { serverName?: string; applicationProtocols: string[] } = { applicationProtocols: [] };
  if (!need(2)) return result;
  const end = Math.min(hello.length, at + 2 + hello.readUInt16BE(at));
  at += 2;
  while (at + 4 <= end) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    const body = hello.subarray(at + 4, at + 4 + length);
    at += 4 + length;
    if (type === EXTENSION_SERVER_NAME && body.length >= 5 && body[2] === 0) {
      const nameLength = body.readUInt16BE(3);
      result.serverName = body
        .subarray(5, 5 + nameLength)
        .toString('ascii')
        .toLowerCase();
    } else if (type === EXTENSION_ALPN && body.length >= 2) {
      let p = 2;
      while (p < body.length) {
        const size = body[p] as number;
        result.applicationProtocols.push(body.subarray(p + 1, p + 1 + size).toString('ascii'));
        p += 1 + size;
      }
    }
  }
  return result;
}

/**
 * Classifies the first bytes of a connection. `complete` says no more bytes will come (the peer
 * half-closed, or the inspector gave up waiting): then a partial answer is final.
 */
export function sniffProtocol(data: Buffer, complete = false): SniffResult {
  if (data.length === 0) return complete ? { kind: 'plain', applicationProtocols: [] } : { kind: 'need-more' };
  if (data[0] !== HANDSHAKE) return sniffHttp(data, complete);
  if (data.length < 5) return complete ? { kind: 'plain', applicationProtocols: [] } : { kind: 'need-more' };
  const major = data[1];
  const recordLength = data.readUInt16BE(3);
  if (major !== 3) return { kind: 'plain', applicationProtocols: [] };
  if (data.length < 5 + recordLength) {
    if (!complete && data.length < MAX_SNIFF_BYTES) return { kind: 'need-more' };
    return { kind: 'tls', applicationProtocols: [] };
  }
  const hello = data.subarray(5, 5 + recordLength);
  if (hello[0] !== CLIENT_HELLO) return { kind: 'tls', applicationProtocols: [] };
  const parsed = parseClientHello(hello);
  if (!parsed) return { kind: 'tls', applicationProtocols: [] };
  return { kind: 'tls', ...(parsed.serverName ? { serverName: parsed.serverName } : {}), applicationProtocols: parsed.applicationProtocols };
}
