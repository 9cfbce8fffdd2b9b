import { connect, type TLSSocket } from 'node:tls';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { describe, expect, test } from '@jest/globals';
import { sniffProtocol } from './protocol-sniffer.js';

/** Captures the first bytes a real TLS client sends. */
async function clientHelloBytes(options: { servername?: string; ALPNProtocols?: string[] }): Promise<Buffer> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const received = new Promise<Buffer>((resolve) =>
    server.once('connection', (socket) =>
      socket.once('data', (data: Buffer) => {
        resolve(data);
        socket.destroy();
      }),
    ),
  );
  const client: TLSSocket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options });
  client.on('error', () => undefined);
  const bytes = await received;
  client.destroy();
  server.close();
  return bytes;
}

describe('protocol sniffing', () => {
  test('a real ClientHello: SNI and ALPN', async () => {
    const hello = await clientHelloBytes({ servername: 'outbound_.8000_._.httpbin.bar.svc.cluster.local', ALPNProtocols: ['h2', 'http/1.1'] });
    expect(sniffProtocol(hello)).toEqual({
      kind: 'tls',
      serverName: 'outbound_.8000_._.httpbin.bar.svc.cluster.local',
      applicationProtocols: ['h2', 'http/1.1'],
    });
    expect(sniffProtocol(hello.subarray(0, 20))).toEqual({ kind: 'need-more' });
    expect(sniffProtocol(hello.subarray(0, 20), true)).toEqual({ kind: 'tls', applicationProtocols: [] });
  });

  test('plain text: HTTP/1.1, HTTP/1.0, the HTTP/2 preface, other bytes', () => {
    expect(sniffProtocol(Buffer.from('GET /ip HTTP/1.1\r\nHost: a\r\n\r\n'))).toEqual({ kind: 'plain', applicationProtocols: ['http/1.1'] });
    expect(sniffProtocol(Buffer.from('GET /ip HTTP/1.0\r\n'))).toEqual({ kind: 'plain', applicationProtocols: ['http/1.0'] });
    expect(sniffProtocol(Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'))).toEqual({ kind: 'plain', applicationProtocols: ['h2c'] });
    expect(sniffProtocol(Buffer.from('GET /i'))).toEqual({ kind: 'need-more' });
    expect(sniffProtocol(Buffer.from('*3\r\n$3\r\nSET\r\n'))).toEqual({ kind: 'plain', applicationProtocols: [] });
    expect(sniffProtocol(Buffer.from('hello'), true)).toEqual({ kind: 'plain', applicationProtocols: [] });
  });
});
