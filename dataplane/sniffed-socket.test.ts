import { connect as netConnect, createServer, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, TLSSocket } from 'node:tls';
import { afterEach, describe, expect, test } from '@jest/globals';
import { newTestAuthority } from '../ca/testing/test-authority.js';
import { waitFor } from '../testing/wait-for.js';
import { sniffConnection, type SniffedConnection } from './sniffed-socket.js';

// The listener filters read a connection's first bytes and give them back: to the socket itself
// (so TLS and HTTP read its handle natively) or, for a client that half-closed meanwhile, through
// a stream that replays them.
const HOST = '127.0.0.1';
let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose connections go through the filters; resolves with the first one's result. */
async function sniffing(onSniffed: (sniffed: SniffedConnection, socket: Socket) => void): Promise<number> {
  server = createServer({ pauseOnConnect: true }, (socket) => void sniffConnection(socket, 5000).then((sniffed) => onSniffed(sniffed, socket)));
  await new Promise<void>((resolve) => server?.listen(0, HOST, resolve));
  return (server.address() as { port: number }).port;
}

function readAll(stream: Duplex): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    stream.on('end', () => resolve(text));
    stream.on('error', reject);
    stream.resume();
  });
}

/** Sends `bytes` and half-closes; what the filters' stream gives back, and whether it is the raw socket. */
async function sendThrough(bytes: string): Promise<{ text: string; raw: boolean }> {
  let received: Promise<{ text: string; raw: boolean }> | undefined;
  const port = await sniffing((sniffed) => (received = readAll(sniffed.stream).then((text) => ({ text, raw: sniffed.isRaw }))));
  const client = netConnect({ host: HOST, port });
  client.end(bytes);
  const result = await waitFor(() => received);
  client.destroy();
  return result;
}

describe('sniffed connections', () => {
  test('plain bytes are given back on the socket itself, then the rest follows in order', async () => {
    const requests = 'GET /first HTTP/1.1\r\nHost: a\r\n\r\nGET /second HTTP/1.1\r\nHost: a\r\n\r\n';
    expect(await sendThrough(requests)).toEqual({ text: requests, raw: true });
  });

  test('a TLS ClientHello read by the filters reaches a TLS socket made on the raw socket: the handshake completes', async () => {
    const authority = await newTestAuthority('cluster.local');
    const serving = authority.loopbackServer();
    const port = await sniffing((sniffed) => {
      expect(sniffed.result.kind).toBe('tls');
      const secure = new TLSSocket(sniffed.stream, { isServer: true, key: serving.keyPem, cert: serving.certPem });
      secure.on('data', (chunk: Buffer) => secure.end(`echo ${chunk.toString()}`));
    });
    const answer = await new Promise<string>((resolve, reject) => {
      const client = tlsConnect({ host: HOST, port, ca: authority.rootPem, servername: 'localhost' }, () => client.write('hello'));
      let text = '';
      client.on('data', (chunk: Buffer) => (text += chunk.toString()));
      client.on('end', () => resolve(text));
      client.on('error', reject);
    });
    expect(answer).toBe('echo hello');
  });

  test('a client that half-closes while the filters wait for more gets its bytes replayed, then the end', async () => {
    // "GET" could still become a request line: the filters wait, and the end arrives instead.
    expect(await sendThrough('GET')).toEqual({ text: 'GET', raw: false });
  });
});
