import { createSocket } from 'node:dgram';
import { connect, isIPv6 } from 'node:net';

export type DnsTransport = 'udp' | 'tcp';

export interface DnsServerAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Sends one DNS message to a resolver over `transport` and resolves its reply (the reply to this
 * message's id over UDP; the first length-prefixed message over TCP). Rejects on a timeout or an
 * error.
 */
export function exchange(server: DnsServerAddress, transport: DnsTransport, message: Buffer, timeoutMs: number): Promise<Buffer> {
  return transport === 'udp' ? exchangeUdp(server, message, timeoutMs) : exchangeTcp(server, message, timeoutMs);
}

function exchangeUdp(server: DnsServerAddress, message: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIPv6(server.host) ? 'udp6' : 'udp4');
    const finish = (error: Error | undefined, reply?: Buffer): void => {
      clearTimeout(timer);
      socket.close();
      if (error) reject(error);
      else resolve(reply as Buffer);
    };
    const timer = setTimeout(() => finish(new Error(`no answer from ${server.host}:${server.port} within ${timeoutMs} ms`)), timeoutMs);
    socket.on('error', (error) => finish(error));
    socket.on('message', (reply) => {
      // A reply to another id (a late answer to an earlier query) is not ours.
      if (reply.length >= 2 && reply.readUInt16BE(0) === message.readUInt16BE(0)) finish(undefined, reply);
    });
    socket.send(message, server.port, server.host, (error) => error && finish(error));
  });
}

function exchangeTcp(server: DnsServerAddress, message: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.host, port: server.port });
    const reader = newLengthPrefixedReader((reply) => finish(undefined, reply));
    const finish = (error: Error | undefined, reply?: Buffer): void => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(reply as Buffer);
    };
    const timer = setTimeout(() => finish(new Error(`no answer from ${server.host}:${server.port} within ${timeoutMs} ms`)), timeoutMs);
    socket.on('error', (error) => finish(error));
    socket.on('data', (chunk) => reader(chunk));
    socket.on('end', () => finish(new Error(`${server.host}:${server.port} closed the connection without an answer`)));
    socket.write(withLengthPrefix(message));
  });
}

/** DNS over TCP frames each message with its length (RFC 1035 §4.2.2). */
export function withLengthPrefix(message: Buffer): Buffer {
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(message.length);
  return Buffer.concat([prefix, message]);
}

/** Feeds TCP chunks; calls `onMessage` with each whole length-prefixed message. */
export function newLengthPrefixedReader(onMessage: (message: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 2) {
      const length = pending.readUInt16BE(0);
      if (pending.length < 2 + length) break;
      const message = pending.subarray(2, 2 + length);
      pending = pending.subarray(2 + length);
      onMessage(message);
    }
  };
}
