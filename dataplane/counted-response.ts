import { ServerResponse } from 'node:http';
import { Http2ServerResponse } from 'node:http2';

/** The body bytes written through a response so far (the request metrics' response size). */
export const BODY_BYTES = Symbol('mesh.response-body-bytes');

function chunkBytes(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  return chunk instanceof Uint8Array ? chunk.length : 0;
}

type Write = (this: unknown, chunk: unknown, ...rest: unknown[]) => boolean;
type End = (this: unknown, ...args: unknown[]) => unknown;

/**
 * The HTTP/1 server's response class, counting the body bytes written through it: one class for
 * every response, where wrapping `write` and `end` on each response cost two closures and a new
 * hidden class per request.
 */
export class CountedServerResponse extends ServerResponse {
  [BODY_BYTES] = 0;

  override write(chunk: unknown, ...rest: unknown[]): boolean {
    this[BODY_BYTES] += chunkBytes(chunk);
    return (ServerResponse.prototype.write as Write).call(this, chunk, ...rest);
  }

  override end(...args: unknown[]): this {
    if (typeof args[0] !== 'function') this[BODY_BYTES] += chunkBytes(args[0]);
    (ServerResponse.prototype.end as End).apply(this, args);
    return this;
  }
}

/** The HTTP/2 compatibility response, counting likewise (its `end` writes its last chunk through `write`). */
export class CountedHttp2ServerResponse extends Http2ServerResponse {
  [BODY_BYTES] = 0;

  override write(chunk: unknown, ...rest: unknown[]): boolean {
    this[BODY_BYTES] += chunkBytes(chunk);
    return (Http2ServerResponse.prototype.write as Write).call(this, chunk, ...rest);
  }
}

/** The body bytes written through `res` so far; 0 for a response of another class. */
export function bodyBytesOf(res: object): number {
  return (res as { [BODY_BYTES]?: number })[BODY_BYTES] ?? 0;
}
