/** Literal HTTP/1.1 requests over a socket: targets no client library would send as written (`#`, `%00`, `..`). */
import { connect } from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Sends `GET <target> HTTP/1.1` with `Connection: close` to host:port and reads the response
 * until the peer closes; status 0 when the connection ended without one.
 */
export function rawGet(host: string, port: number, target: string, headers: Readonly<Record<string, string>> = {}, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no response to GET ${target} from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => {
      const lines = [
        `GET ${target} HTTP/1.1`,
        `Host: ${headers['host'] ?? `${host}:${port}`}`,
        'Connection: close',
        ...Object.entries(headers)
          .filter(([name]) => name !== 'host')
          .map(([name, value]) => `${name}: ${value}`),
      ];
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const head = end < 0 ? text : text.slice(0, end);
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const parsed: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon > 0) parsed[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = end < 0 ? '' : text.slice(end + 4);
      if (parsed['transfer-encoding'] === 'chunked') body = dechunk(body);
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers: parsed, body });
    });
  });
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol < 0) return out;
    const size = parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

/**
 * Writes `bytes` to host:port as they are and reads until the peer closes or, with `untilHead`,
 * until a response head has arrived: the status of the first response (0 when the connection
 * ended without one) and the text read. `halfClose` ends the writing side after the bytes (a
 * request cut short then ends instead of waiting for the rest). Rejects when the peer neither
 * answers nor closes within `timeoutMs`.
 */
export function rawExchange(
  host: string,
  port: number,
  bytes: Buffer | string,
  options: { halfClose?: boolean; untilHead?: boolean; timeoutMs?: number } = {},
): Promise<{ status: number; text: string }> {
  const timeoutMs = options.timeoutMs ?? 5000;
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`neither an answer nor a close from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = (): void => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0), text });
    };
    socket.on('connect', () => (options.halfClose ? socket.end(bytes) : socket.write(bytes)));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (options.untilHead && /^HTTP\/1\.[01] \d{3}[^]*?\r\n\r\n/.test(Buffer.concat(chunks).toString('latin1'))) socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.on('close', finish);
  });
}
