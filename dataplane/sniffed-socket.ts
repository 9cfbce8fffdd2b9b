import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { MAX_SNIFF_BYTES, sniffProtocol, type SniffResult } from './protocol-sniffer.js';
import { PrefixedStream } from './prefixed-stream.js';

export interface SniffedConnection {
  readonly result: Exclude<SniffResult, { kind: 'need-more' }>;
  /**
   * The connection readable again from its first byte, paused. Normally the socket itself with
   * the bytes read put back (`unshift`): a TLS socket or an HTTP server on it then reads its
   * handle natively (a TLSSocket drains what was put back before it reads the handle, an HTTP/2
   * session likewise). Once the client has half-closed while the filters read, nothing can be
   * put back, and a stream replays the bytes instead (TLS over it costs a JavaScript stream
   * wrapper on every record).
   */
  readonly stream: Duplex;
  /** The stream is the raw socket, paused: an HTTP/1 server on it must resume it. */
  readonly isRaw: boolean;
}

/** Reads the first bytes of a connection (the listener filters' view), then gives them back. */
export async function sniffConnection(socket: Socket, timeoutMs: number): Promise<SniffedConnection> {
  let buffered = Buffer.alloc(0);
  return new Promise((resolve) => {
    const finish = (complete: boolean): void => {
      const result = sniffProtocol(buffered, complete);
      if (result.kind === 'need-more') return;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.pause();
      if (socket.readableEnded) {
        const replay = new PrefixedStream(socket, buffered);
        // The socket's end was read already: the replay ends after the bytes, as the socket did.
        replay.push(null);
        return resolve({ result, stream: replay, isRaw: false });
      }
      if (buffered.length > 0) socket.unshift(buffered);
      resolve({ result, stream: socket, isRaw: true });
    };
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      finish(buffered.length >= MAX_SNIFF_BYTES);
    };
    const onEnd = (): void => finish(true);
    const timer = setTimeout(() => finish(true), timeoutMs);
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.resume();
  });
}
