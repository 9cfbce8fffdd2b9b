import { createSocket } from 'node:dgram';
import { createServer, type Socket } from 'node:net';
import dnsPacket, { type Answer, type Packet } from 'dns-packet';
import { newLengthPrefixedReader, withLengthPrefix } from '../upstream-exchange.js';

/** A resolver for the tests: answers its own records over UDP and TCP, NXDOMAIN for the rest, and counts what it was asked. */
export interface UpstreamDnsServer {
  readonly port: number;
  readonly asked: string[];
  close(): Promise<void>;
}

export async function startUpstreamDnsServer(host: string, records: readonly Answer[]): Promise<UpstreamDnsServer> {
  const asked: string[] = [];
  const answer = (raw: Buffer): Buffer => {
    const query = dnsPacket.decode(raw);
    const question = query.questions?.[0];
    asked.push(`${question?.name ?? ''} ${question?.type ?? ''}`);
    const answers = records.filter((record) => record.name === question?.name && record.type === question?.type);
    const known = records.some((record) => record.name === question?.name);
    const response: Packet = {
      id: query.id ?? 0,
      type: 'response',
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : 3),
      questions: query.questions ?? [],
      answers,
    };
    return dnsPacket.encode(response);
  };
  const udp = createSocket('udp4');
  udp.on('message', (raw, peer) => udp.send(answer(raw), peer.port, peer.address));
  const port = await new Promise<number>((resolve) => udp.bind(0, host, () => resolve(udp.address().port)));
  const connections = new Set<Socket>();
  const tcp = createServer((connection) => {
    connections.add(connection);
    connection.on('close', () => connections.delete(connection));
    connection.on(
      'data',
      newLengthPrefixedReader((raw) => connection.write(withLengthPrefix(answer(raw)))),
    );
  });
  await new Promise<void>((resolve) => tcp.listen(port, host, resolve));
  return {
    port,
    asked,
    async close() {
      for (const connection of connections) connection.destroy();
      await Promise.all([new Promise<void>((resolve) => udp.close(() => resolve())), new Promise<void>((resolve) => tcp.close(() => resolve()))]);
    },
  };
}
