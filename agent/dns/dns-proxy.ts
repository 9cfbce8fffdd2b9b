import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, isIPv6, type Server, type Socket } from 'node:net';
import dnsPacket, { type Packet } from 'dns-packet';
import { errorMessage, type Logger, type MeshMetrics } from '../../runtime/index.js';
import type { LookupTable } from './lookup-table.js';
import { exchange, newLengthPrefixedReader, withLengthPrefix, type DnsServerAddress, type DnsTransport } from './upstream-exchange.js';

export interface DnsProxyOptions {
  /** Where it answers, over UDP and TCP (the reference's `localhost:15053`). */
  readonly listen: DnsServerAddress;
  /** resolv.conf's name servers, asked in order for names the table does not know. */
  readonly upstreams: () => readonly DnsServerAddress[];
  /** DNS_FORWARD_TIMEOUT: how long one upstream may take. */
  readonly forwardTimeoutMs: number;
  readonly log: Logger;
  readonly metrics: MeshMetrics<'pilot-agent'>;
}

export interface DnsProxy {
  /** Binds both transports; resolves the bound port (the same for both). */
  start(): Promise<number>;
  stop(): Promise<void>;
  /** The table answers from now on. */
  update(table: LookupTable): void;
  /** Why it cannot answer yet ("DNS lookup table is not ready yet"), or undefined. */
  notReady(): string | undefined;
}

const MIN_UDP_SIZE = 512;
const MAX_TCP_SIZE = 65_535;
const RCODE_SERVFAIL = 2;

/**
 * The agent's DNS proxy (MESH_META_DNS_CAPTURE), as the reference's: names the daemon's name table
 * knows get an authoritative answer (NOERROR and no records when the name has none of the asked
 * type, never NXDOMAIN); everything else goes to the upstream resolvers as it came, and their
 * answer back as it is. SERVFAIL before the first table and when no upstream answers.
 */
export function newDnsProxy(options: DnsProxyOptions): DnsProxy {
  const { log, metrics } = options;
  const requests = metrics.counter('dns_requests_total');
  const upstreamRequests = metrics.counter('dns_upstream_requests_total');
  const failures = metrics.counter('dns_upstream_failures_total');
  const duration = metrics.histogram('dns_upstream_request_duration_seconds');
  let table: LookupTable | undefined;
  let udp: UdpSocket | undefined;
  let tcp: Server | undefined;
  const connections = new Set<Socket>();

  const forward = async (raw: Buffer, transport: DnsTransport): Promise<Buffer | undefined> => {
    upstreamRequests.inc();
    const started = performance.now();
    try {
      for (const upstream of options.upstreams()) {
        try {
          return await exchange(upstream, transport, raw, options.forwardTimeoutMs);
        } catch (error) {
          log.info({ upstream: `${upstream.host}:${upstream.port}`, error: errorMessage(error) }, 'upstream failure');
        }
      }
      failures.inc();
      return undefined;
    } finally {
      duration.observe((performance.now() - started) / 1000);
    }
  };

  const answer = async (raw: Buffer, transport: DnsTransport): Promise<Buffer | undefined> => {
    let query: Packet;
    try {
      query = dnsPacket.decode(raw);
    } catch {
      return undefined;
    }
    requests.inc();
    const question = query.questions?.[0];
    if (!question || !table) return encode(reply(query, { rcode: RCODE_SERVFAIL }), query, transport);
    const answers = table.lookup(question.type, question.name);
    if (answers) return encode(reply(query, { authoritative: true, answers }), query, transport);
    const upstream = await forward(raw, transport);
    return upstream ? fitted(upstream, query, transport) : encode(reply(query, { rcode: RCODE_SERVFAIL }), query, transport);
  };

  return {
    async start() {
      const type = isIPv6(options.listen.host) ? 'udp6' : 'udp4';
      const socket = createSocket(type);
      udp = socket;
      socket.on('message', (raw, peer) => {
        void answer(raw, 'udp').then((bytes) => bytes && socket.send(bytes, peer.port, peer.address));
      });
      const port = await new Promise<number>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(options.listen.port, options.listen.host, () => resolve(socket.address().port));
      });
      tcp = createServer((connection) => {
        connections.add(connection);
        connection.on('close', () => connections.delete(connection));
        connection.on('error', () => connection.destroy());
        const read = newLengthPrefixedReader((raw) => {
          void answer(raw, 'tcp').then((bytes) => bytes && !connection.destroyed && connection.write(withLengthPrefix(bytes)));
        });
        connection.on('data', read);
      });
      const server = tcp;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, options.listen.host, () => resolve());
      });
      log.info({ address: `${options.listen.host}:${port}`, upstreams: options.upstreams().map((u) => `${u.host}:${u.port}`) }, 'DNS proxy listening');
      return port;
    },
    async stop() {
      for (const connection of connections) connection.destroy();
      await Promise.all([
        new Promise<void>((resolve) => (udp ? udp.close(() => resolve()) : resolve())),
        new Promise<void>((resolve) => (tcp ? tcp.close(() => resolve()) : resolve())),
      ]);
    },
    update(next) {
      table = next;
      log.debug({ hosts: next.hosts }, 'updated lookup table');
    },
    notReady() {
      return table ? undefined : 'DNS lookup table is not ready yet';
    },
  };
}

function reply(query: Packet, parts: { rcode?: number; authoritative?: boolean; answers?: Packet['answers'] }): Packet {
  const recursionDesired = (query.flags ?? 0) & dnsPacket.RECURSION_DESIRED;
  return {
    id: query.id ?? 0,
    type: 'response',
    // The opcode stays the query's (bits 11-14); the response code sits in the low four bits.
    flags: ((query.flags ?? 0) & 0x7800) | recursionDesired | (parts.authoritative ? dnsPacket.AUTHORITATIVE_ANSWER : 0) | (parts.rcode ?? 0),
    questions: query.questions ?? [],
    answers: parts.answers ?? [],
  };
}

/** The size a reply may have: the client's EDNS buffer size over UDP (at least 512), 64 KiB over TCP. */
function sizeLimit(query: Packet, transport: DnsTransport): number {
  if (transport === 'tcp') return MAX_TCP_SIZE;
  const opt = query.additionals?.find((record) => record.type === 'OPT') as { udpPayloadSize?: number } | undefined;
  return Math.max(MIN_UDP_SIZE, opt?.udpPayloadSize ?? 0);
}

function encode(packet: Packet, query: Packet, transport: DnsTransport): Buffer {
  const bytes = dnsPacket.encode(packet);
  return bytes.length <= sizeLimit(query, transport) ? bytes : truncated(packet, sizeLimit(query, transport));
}

/** An upstream answer that does not fit the client's UDP size is cut down with TC set, so the client asks again over TCP. */
function fitted(upstream: Buffer, query: Packet, transport: DnsTransport): Buffer {
  const limit = sizeLimit(query, transport);
  if (upstream.length <= limit) return upstream;
  try {
    return truncated(dnsPacket.decode(upstream), limit);
  } catch {
    return upstream.subarray(0, limit);
  }
}

function truncated(packet: Packet, limit: number): Buffer {
  const answers = [...(packet.answers ?? [])];
  let bytes = dnsPacket.encode({ ...packet, authorities: [], additionals: [], answers, flags: (packet.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE });
  while (bytes.length > limit && answers.length > 0) {
    answers.pop();
    bytes = dnsPacket.encode({ ...packet, authorities: [], additionals: [], answers, flags: (packet.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE });
  }
  return bytes;
}
