import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

/**
 * A socket whose first bytes were read by the listener filters, readable again from the start.
 * TLS and HTTP servers read from it through the stream API (a raw socket would let them read its
 * handle directly and miss the bytes already taken). It passes the socket calls servers make.
 */
export class PrefixedStream extends Duplex {
  constructor(
    readonly socket: Socket,
    prefix: Buffer,
  ) {
    super({ allowHalfOpen: true });
    if (prefix.length > 0) this.push(prefix);
    socket.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('close', () => this.destroy());
    socket.on('error', (error) => this.destroy(error));
  }

  get remoteAddress(): string | undefined {
    return this.socket.remoteAddress;
  }

  get remotePort(): number | undefined {
    return this.socket.remotePort;
  }

  address(): ReturnType<Socket['address']> {
    return this.socket.address();
  }

  setTimeout(timeoutMs: number, callback?: () => void): this {
    this.socket.setTimeout(timeoutMs, callback);
    if (timeoutMs > 0) this.socket.once('timeout', () => this.emit('timeout'));
    return this;
  }

  setNoDelay(noDelay?: boolean): this {
    this.socket.setNoDelay(noDelay);
    return this;
  }

  setKeepAlive(enable?: boolean, delayMs?: number): this {
    this.socket.setKeepAlive(enable, delayMs);
    return this;
  }

  /** A TCP RST, as Envoy resets a connection no chain accepts. */
  resetAndDestroy(): this {
    this.socket.resetAndDestroy();
    return this;
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.socket.write(chunk, encoding, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.socket.destroy();
    callback(error);
  }
}
