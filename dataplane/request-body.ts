import type { Readable } from 'node:stream';
import type { BufferedRequestBody } from './decisions/index.js';

/** What was read of a request body before the upstream request: sent first, then the rest of the stream. */
export interface BodyPrefix {
  readonly chunks: readonly Buffer[];
  /** The whole body was read (nothing left in the stream). */
  readonly ended: boolean;
}

/**
 * Buffers a request's body for an authorization check (`with_request_body`), as Envoy buffers
 * before calling the server: up to `maxBytes`, knowing from Content-Length (or from one byte
 * past the limit) whether there is more. What it read is kept, for `prefix()` to send upstream.
 */
export interface RequestBodyBuffer {
  read(maxBytes: number): Promise<BufferedRequestBody>;
  /** The bytes read so far; undefined when nothing was read (the stream is untouched). */
  prefix(): BodyPrefix | undefined;
}

export function newRequestBodyBuffer(req: Readable, contentLength: string | undefined): RequestBodyBuffer {
  const chunks: Buffer[] = [];
  let total = 0;
  let ended = false;
  let touched = false;
  const declared = contentLength !== undefined && /^\d+$/.test(contentLength) ? Number(contentLength) : undefined;

  const fill = (limit: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (req.readableEnded) ended = true;
      if (ended || total >= limit) return resolve();
      const onData = (chunk: Buffer): void => {
        chunks.push(chunk);
        total += chunk.length;
        if (total >= limit) finish();
      };
      const onEnd = (): void => {
        ended = true;
        finish();
      };
      const onError = (error: Error): void => {
        cleanup();
        reject(error);
      };
      const cleanup = (): void => {
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onError);
        req.off('close', onClose);
      };
      // A client that goes away mid-body: what arrived is all there is.
      const onClose = (): void => onEnd();
      const finish = (): void => {
        cleanup();
        req.pause();
        resolve();
      };
      req.on('data', onData);
      req.once('end', onEnd);
      req.once('error', onError);
      req.once('close', onClose);
      req.resume();
    });

  return {
    async read(maxBytes) {
      touched = true;
      // A declared length past the limit needs no reading to know; one past it, read, tells a chunked body.
      const knownLonger = declared !== undefined && declared > maxBytes;
      await fill(knownLonger ? maxBytes : maxBytes + 1);
      const all = Buffer.concat(chunks);
      return { bytes: all.subarray(0, maxBytes), truncated: knownLonger || all.length > maxBytes };
    },
    prefix: () => (touched ? { chunks, ended } : undefined),
  };
}
