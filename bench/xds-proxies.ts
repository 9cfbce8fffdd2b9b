/**
 * Simulated sidecars for the xDS benchmark, run as a child process: each proxy is one ADS stream
 * on its own HTTP/2 connection that subscribes as Envoy does (CDS and LDS wildcard, then EDS and
 * RDS by name) and ACKs every response. Commands and reports travel over the IPC channel.
 */
import { credentials, makeGenericClientConstructor, type ClientDuplexStream, type ServiceDefinition } from '@grpc/grpc-js';
import { performance } from 'node:perf_hooks';
import { loadEnvoyProtos } from '../xds/envoy/envoy-protos.js';
import { jsonToStruct } from '../xds/envoy/struct-json.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from '../xds/envoy/type-urls.js';

export interface ConnectCommand {
  cmd: 'connect';
  /** Proxy ids [from, to). */
  from: number;
  to: number;
  port: number;
  edsNames: string[];
  routeNames: string[];
  /** The types the daemon serves: a proxy is synced once it ACKed each. */
  types: string[];
  /** The pod name and namespace of proxy i. */
  pods: { name: string; namespace: string; ip: string }[];
}
export interface FanoutCommand {
  cmd: 'fanout';
  count: number;
  port: number;
}
export type ProxiesCommand = ConnectCommand | FanoutCommand | { cmd: 'mark' } | { cmd: 'exit' };

export type ProxiesReport =
  | { kind: 'synced'; proxies: number; bytes: number; refused: number; lastAckAt: number }
  | { kind: 'eds'; times: number[] }
  | { kind: 'fanout-done'; bytes: number; doneAt: number };

interface Response {
  version_info: string;
  nonce: string;
  type_url: string;
  bytes: number;
}

const protos = loadEnvoyProtos();
const requestType = protos.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
const responseType = protos.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
const ADS: ServiceDefinition = {
  StreamAggregatedResources: {
    path: '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources',
    requestStream: true,
    responseStream: true,
    requestSerialize: (value: object) => Buffer.from(requestType.encode(requestType.fromObject(value)).finish()),
    requestDeserialize: (bytes: Buffer) => bytes,
    responseSerialize: (value: Buffer) => value,
    // Only what an ACK needs; the resources stay encoded, as Envoy's hot path would not matter here.
    responseDeserialize: (bytes: Buffer): Response => {
      const message = responseType.decode(bytes) as unknown as { version_info: string; nonce: string; type_url: string };
      return { version_info: message.version_info, nonce: message.nonce, type_url: message.type_url, bytes: bytes.length };
    },
  },
};
const FANOUT: ServiceDefinition = {
  Stream: {
    path: '/mesh.bench.Fanout/Stream',
    requestStream: false,
    responseStream: true,
    requestSerialize: (value: Buffer) => value,
    requestDeserialize: (bytes: Buffer) => bytes,
    responseSerialize: (value: Buffer) => value,
    responseDeserialize: (bytes: Buffer) => bytes,
  },
};
const AdsClient = makeGenericClientConstructor(ADS, 'Ads');
const FanoutClient = makeGenericClientConstructor(FANOUT, 'Fanout');
// Every proxy gets its own connection, as separate Envoys would.
const CHANNEL_OPTIONS = { 'grpc.use_local_subchannel_pool': 1, 'grpc.max_receive_message_length': 256 * 1024 * 1024 };

const now = (): number => performance.timeOrigin + performance.now();
const send = (report: ProxiesReport): void => {
  process.send?.(report);
};

const clients: { close(): void }[] = [];
let marked = false;
let edsTimes: number[] = [];
let markedPending = 0;
let adsClients = 0;

function connect(command: ConnectCommand): void {
  let synced = 0;
  let bytes = 0;
  let refused = 0;
  let lastAckAt = 0;
  const total = command.to - command.from;
  const settle = (): void => {
    if (synced + refused === total) send({ kind: 'synced', proxies: synced, bytes, refused, lastAckAt });
  };
  for (let i = command.from; i < command.to; i++) {
    const pod = command.pods[i] as ConnectCommand['pods'][number];
    const client = new AdsClient(`127.0.0.1:${command.port}`, credentials.createInsecure(), CHANNEL_OPTIONS);
    clients.push(client);
    adsClients++;
    const call = (client as unknown as { StreamAggregatedResources(): ClientDuplexStream<object, Response> }).StreamAggregatedResources();
    const node = {
      id: `sidecar~${pod.ip}~${pod.name}.${pod.namespace}~${pod.namespace}.svc.cluster.local`,
      metadata: jsonToStruct({ NAMESPACE: pod.namespace, MESH_VERSION: '1.0.0', INSTANCE_IPS: pod.ip }),
      locality: { region: 'r1', zone: 'z1' },
    };
    const acked = new Set<string>();
    let done = false;
    call.on('data', (response: Response) => {
      bytes += response.bytes;
      const names = response.type_url === ENDPOINT_TYPE ? command.edsNames : response.type_url === ROUTE_TYPE ? command.routeNames : [];
      call.write({ type_url: response.type_url, version_info: response.version_info, response_nonce: response.nonce, resource_names: names });
      if (!acked.has(response.type_url)) {
        acked.add(response.type_url);
        if (response.type_url === CLUSTER_TYPE) call.write({ node, type_url: ENDPOINT_TYPE, resource_names: command.edsNames });
        if (response.type_url === LISTENER_TYPE) call.write({ node, type_url: ROUTE_TYPE, resource_names: command.routeNames });
      } else if (marked && response.type_url === ENDPOINT_TYPE) {
        edsTimes.push(now());
        if (--markedPending === 0) send({ kind: 'eds', times: edsTimes });
      }
      if (!done && acked.size === command.types.length) {
        done = true;
        synced++;
        lastAckAt = now();
        settle();
      }
    });
    call.on('error', () => {
      if (!done) {
        done = true;
        refused++;
        settle();
      }
    });
    call.write({ node, type_url: CLUSTER_TYPE, resource_names: [] });
    if (command.types.includes(LISTENER_TYPE)) call.write({ node, type_url: LISTENER_TYPE, resource_names: [] });
    else if (command.types.includes(ROUTE_TYPE)) call.write({ node, type_url: ROUTE_TYPE, resource_names: command.routeNames });
  }
}

function fanout(command: FanoutCommand): void {
  let finished = 0;
  let bytes = 0;
  for (let i = 0; i < command.count; i++) {
    const client = new FanoutClient(`127.0.0.1:${command.port}`, credentials.createInsecure(), CHANNEL_OPTIONS);
    clients.push(client);
    const call = (client as unknown as { Stream(request: Buffer): NodeJS.ReadableStream }).Stream(Buffer.alloc(0));
    call.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    call.on('end', () => {
      if (++finished === command.count) send({ kind: 'fanout-done', bytes, doneAt: now() });
    });
    call.on('error', () => {
      if (++finished === command.count) send({ kind: 'fanout-done', bytes, doneAt: now() });
    });
  }
}

process.on('message', (command: ProxiesCommand) => {
  switch (command.cmd) {
    case 'connect':
      connect(command);
      break;
    case 'fanout':
      fanout(command);
      break;
    case 'mark':
      marked = true;
      edsTimes = [];
      markedPending = adsClients;
      break;
    case 'exit':
      for (const client of clients) client.close();
      process.exit(0);
  }
});
