/**
 * Simulated sidecars for the xDS benchmark, run as a child process: each proxy is one ADS stream
 * on its own HTTP/2 connection that subscribes as Envoy does (CDS and LDS wildcard, then EDS and
 * RDS by name) and ACKs every response. Commands and reports travel over the IPC channel.
 */
import { credentials, makeGenericClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { performance } from 'node:perf_hooks';
import {
  CLUSTER_TYPE,
  ENDPOINT_TYPE,
  LISTENER_TYPE,
  ROUTE_TYPE,
  jsonToStruct,
  loadEnvoyProtos,
  newDeltaDiscoveryClient,
  newDiscoveryClient,
  newRawDiscoveryCodec,
  type DeltaDiscoveryResponse,
  type DiscoveryConnectionOptions,
  type DiscoveryResponse,
} from '../xds/envoy/index.js';

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
  /**
   * As Envoy over a long run (the soak): EDS and RDS names follow each CDS and LDS response
   * (`edsNames` and `routeNames` are then ignored), and an ended stream reconnects with backoff.
   */
  follow?: boolean;
  /** An ended stream reconnects with backoff (as `follow` does), e.g. one refused by the admission rate. */
  reconnect?: boolean;
  /** Delta xDS (DeltaAggregatedResources, as `DELTA_GRPC`) instead of state of the world. */
  delta?: boolean;
}
export interface FanoutCommand {
  cmd: 'fanout';
  count: number;
  port: number;
}
/** Opens `count` echo streams (one connection each) that answer every message with `answerBytes` (default 1); `echo-ready` once all are open. */
export interface EchoCommand {
  cmd: 'echo';
  count: number;
  port: number;
  answerBytes?: number;
}
/**
 * Starts timing a change: each live proxy reports when the first response of `type` (EDS unless
 * given) reaches it; `marked` once every one has.
 */
export interface MarkCommand {
  cmd: 'mark';
  type?: string;
}
/** `close` ends every stream of the proxies (`closed` once done): the next `connect` starts afresh. */
export type ProxiesCommand =
  ConnectCommand | FanoutCommand | EchoCommand | MarkCommand | { cmd: 'close' } | { cmd: 'status' } | { cmd: 'cpu' } | { cmd: 'exit' };

/** Since the proxies connected: streams open now (a response received since the last (re)connect), stream ends, responses by type URL. */
export interface ProxiesStatus {
  open: number;
  streamEnds: number;
  responses: Record<string, number>;
  bytes: number;
}

export type ProxiesReport =
  | { kind: 'synced'; proxies: number; bytes: number; refused: number; lastAckAt: number }
  /** After a `mark`: when each connected proxy got the marked type's push, the bytes of those responses, and the responses of other types (and their bytes) meanwhile. */
  | { kind: 'marked'; times: number[]; bytes: number; others: number; otherBytes: number }
  | { kind: 'closed' }
  | { kind: 'fanout-done'; bytes: number; doneAt: number }
  | { kind: 'echo-ready' }
  /** This process's CPU time so far (user + system), in µs. */
  | { kind: 'cpu'; micros: number }
  | ({ kind: 'status' } & ProxiesStatus);

const protos = loadEnvoyProtos();
/** One codec for every simulated proxy: the subscription they share is encoded once for all their ACKs. */
const rawCodec = newRawDiscoveryCodec(protos);
/** A bytes-in, bytes-out method of the raw baselines' service. */
function rawMethod(name: string, requestStream: boolean): ServiceDefinition {
  const identity = (bytes: Buffer): Buffer => bytes;
  return {
    [name]: {
      path: `/mesh.bench.Fanout/${name}`,
      requestStream,
      responseStream: true,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
}
export const FANOUT = rawMethod('Stream', false);
const FanoutClient = makeGenericClientConstructor(FANOUT, 'Fanout');
export const ECHO = rawMethod('Echo', true);
const EchoClient = makeGenericClientConstructor(ECHO, 'Echo');
// Every proxy gets its own connection, as separate Envoys would.
const CHANNEL_OPTIONS = { 'grpc.use_local_subchannel_pool': 1, 'grpc.max_receive_message_length': 256 * 1024 * 1024 };

const now = (): number => performance.timeOrigin + performance.now();
const send = (report: ProxiesReport): void => {
  process.send?.(report);
};

const clients: { close(): void }[] = [];
let marked = false;
let markedType: string = ENDPOINT_TYPE;
let markedTimes: number[] = [];
let markedBytes = 0;
let otherResponses = 0;
let otherBytes = 0;
let markedPending = 0;
/** Which `mark` is running; a proxy counted in it remembers the number. */
let markSeq = 0;
/** Synced proxies whose stream is still the one they synced on: those an endpoint change reaches. */
let liveProxies = 0;
const status: ProxiesStatus = { open: 0, streamEnds: 0, responses: {}, bytes: 0 };

/** A response of either flavour, as far as the simulated proxy reads it. */
type AnyResponse = (DiscoveryResponse | DeltaDiscoveryResponse) & { bytes?: number };

/** One simulated proxy's ADS client, state of the world or delta; responses read only as far as an ACK needs. */
interface ProxyClient {
  start(): void;
  subscribe(typeUrl: string, names: readonly string[]): void;
  ack(response: AnyResponse): void;
  /** The EDS names of the clusters held (after a CDS response), or the route names of the listeners held (after an LDS one). */
  followed(response: AnyResponse): string[];
  close(): void;
}

function newProxyClient(
  delta: boolean,
  options: DiscoveryConnectionOptions & { initial: readonly (readonly [string, readonly string[]])[] },
  onResponse: (response: AnyResponse) => void,
): ProxyClient {
  // What each cluster and listener held asks for: a delta response names only what changed.
  const held = new Map<string, Map<string, string[]>>([
    [CLUSTER_TYPE, new Map()],
    [LISTENER_TYPE, new Map()],
  ]);
  const followedOf = (typeUrl: string, resources: readonly Record<string, unknown>[], removed: readonly string[], complete: boolean): string[] => {
    const map = held.get(typeUrl) as Map<string, string[]>;
    if (complete) map.clear();
    for (const name of removed) map.delete(name);
    for (const resource of resources)
      map.set(String(resource['name']), typeUrl === CLUSTER_TYPE ? edsNameOf(resource) : [...collectRouteNames(resource, new Set())]);
    return [...new Set([...map.values()].flat())].sort();
  };
  if (delta) {
    // Versions are held only by streams that reopen: a thousand proxies' worth costs the simulator more than the daemon.
    const client = newDeltaDiscoveryClient({ ...options, holdVersions: options.reconnect !== undefined, onResponse });
    return {
      start: () => client.start(),
      subscribe: (typeUrl, names) => client.subscribe(typeUrl, names),
      ack: (response) => client.ack(response as DeltaDiscoveryResponse),
      followed(response) {
        const { resources, removed } = client.decode(response as DeltaDiscoveryResponse);
        return followedOf(
          response.type_url,
          resources.map((resource) => resource.resource),
          removed,
          false,
        );
      },
      close: () => client.close(),
    };
  }
  // ACKs go without the node.
  const client = newDiscoveryClient({ ...options, nodeOnAcks: false, onResponse });
  return {
    start: () => client.start(),
    subscribe: (typeUrl, names) => client.subscribe(typeUrl, names),
    ack: (response) => client.ack(response as DiscoveryResponse),
    followed: (response) => followedOf(response.type_url, client.decode(response as DiscoveryResponse), [], true),
    close: () => client.close(),
  };
}

function edsNameOf(cluster: Record<string, unknown>): string[] {
  if (cluster['type'] !== 'EDS' && cluster['type'] !== 3) return [];
  const edsConfig = cluster['eds_cluster_config'] as { service_name?: string } | undefined;
  return [edsConfig?.service_name || String(cluster['name'])];
}

function collectRouteNames(value: unknown, names: Set<string>): Set<string> {
  if (Array.isArray(value)) value.forEach((item) => collectRouteNames(item, names));
  else if (value && typeof value === 'object') {
    const rds = (value as { rds?: { route_config_name?: string } }).rds;
    if (rds?.route_config_name) names.add(rds.route_config_name);
    Object.values(value).forEach((item) => collectRouteNames(item, names));
  }
  return names;
}

function connect(command: ConnectCommand): void {
  let synced = 0;
  let bytes = 0;
  let refused = 0;
  let lastAckAt = 0;
  const total = command.to - command.from;
  const retries = command.follow === true || command.reconnect === true;
  // Frozen once: every proxy then sends the same lists, which the codec encodes once.
  const edsNames = Object.freeze([...command.edsNames]);
  const routeNames = Object.freeze([...command.routeNames]);
  const settle = (): void => {
    // A proxy that reconnects after a refusal settles only once synced.
    if (synced + (retries ? 0 : refused) === total) send({ kind: 'synced', proxies: synced, bytes, refused, lastAckAt });
  };
  const countMarked = (): void => {
    if (--markedPending === 0) send({ kind: 'marked', times: markedTimes, bytes: markedBytes, others: otherResponses, otherBytes });
  };
  for (let i = command.from; i < command.to; i++) {
    const pod = command.pods[i] as ConnectCommand['pods'][number];
    const acked = new Set<string>();
    let done = false;
    let open = false;
    let live = false;
    let countedIn = 0;
    const connection = {
      protos,
      target: `127.0.0.1:${command.port}`,
      credentials: credentials.createInsecure(),
      channelOptions: CHANNEL_OPTIONS,
      node: {
        id: `sidecar~${pod.ip}~${pod.name}.${pod.namespace}~${pod.namespace}.svc.cluster.local`,
        metadata: jsonToStruct({ NAMESPACE: pod.namespace, MESH_VERSION: '1.0.0', INSTANCE_IPS: pod.ip }),
        locality: { region: 'r1', zone: 'z1' },
      },
      // Only what an ACK needs is read; the resources stay encoded.
      raw: rawCodec,
      ...(retries ? { reconnect: { firstMs: 500, maxMs: 10_000 } } : {}),
      initial: [
        [CLUSTER_TYPE, []] as const,
        ...(command.types.includes(LISTENER_TYPE)
          ? [[LISTENER_TYPE, []] as const]
          : command.types.includes(ROUTE_TYPE)
            ? [[ROUTE_TYPE, routeNames] as const]
            : []),
      ],
      onStreamEnd({ error }: { error?: Error }) {
        status.streamEnds++;
        if (open) {
          open = false;
          status.open--;
        }
        if (error && !done) {
          done = !retries;
          refused++;
          settle();
        }
        if (live) {
          // Gone: a change in progress no longer waits for it.
          live = false;
          liveProxies--;
          if (marked && countedIn !== markSeq) countMarked();
        }
      },
    };
    const client: ProxyClient = newProxyClient(command.delta ?? false, connection, (response) => {
      bytes += response.bytes ?? 0;
      status.bytes += response.bytes ?? 0;
      status.responses[response.type_url] = (status.responses[response.type_url] ?? 0) + 1;
      if (!open) {
        open = true;
        status.open++;
      }
      client.ack(response);
      if (command.follow) {
        // No names at all would be the wildcard: Envoy sends no request then, and neither do we.
        const next = response.type_url === CLUSTER_TYPE ? ENDPOINT_TYPE : response.type_url === LISTENER_TYPE ? ROUTE_TYPE : undefined;
        const names = next ? client.followed(response) : [];
        if (next && names.length > 0) client.subscribe(next, names);
      } else if (!acked.has(response.type_url)) {
        acked.add(response.type_url);
        if (response.type_url === CLUSTER_TYPE) client.subscribe(ENDPOINT_TYPE, edsNames);
        if (response.type_url === LISTENER_TYPE) client.subscribe(ROUTE_TYPE, routeNames);
      } else if (marked && live && countedIn !== markSeq && response.type_url === markedType) {
        countedIn = markSeq;
        markedTimes.push(now());
        markedBytes += response.bytes ?? 0;
        countMarked();
      } else if (marked) {
        otherResponses++;
        otherBytes += response.bytes ?? 0;
      }
      acked.add(response.type_url);
      if (!done && acked.size === command.types.length) {
        done = true;
        synced++;
        lastAckAt = now();
        if (!command.follow) {
          live = true;
          liveProxies++;
        }
        settle();
      }
    });
    clients.push(client);
    client.start();
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

const ACK_BYTE = Buffer.from([1]);

/** The raw baseline of a push: streams that answer each message at once, as an ACK would. */
function echo(command: EchoCommand): void {
  let ready = 0;
  const answer = command.answerBytes === undefined ? ACK_BYTE : Buffer.alloc(Math.max(1, command.answerBytes), 1);
  for (let i = 0; i < command.count; i++) {
    const client = new EchoClient(`127.0.0.1:${command.port}`, credentials.createInsecure(), CHANNEL_OPTIONS);
    clients.push(client);
    const call = (client as unknown as { Echo(): NodeJS.ReadWriteStream }).Echo();
    let first = true;
    call.on('data', () => {
      if (first) {
        first = false;
        if (++ready === command.count) send({ kind: 'echo-ready' });
      } else call.write(answer);
    });
    call.on('error', () => undefined);
    call.write(ACK_BYTE);
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
    case 'echo':
      echo(command);
      break;
    case 'cpu': {
      const usage = process.cpuUsage();
      send({ kind: 'cpu', micros: usage.user + usage.system });
      break;
    }
    case 'status':
      send({ kind: 'status', ...status, responses: { ...status.responses } });
      break;
    case 'mark':
      marked = true;
      markedType = command.type ?? ENDPOINT_TYPE;
      markedTimes = [];
      markedBytes = 0;
      otherResponses = 0;
      otherBytes = 0;
      markSeq++;
      markedPending = liveProxies;
      break;
    case 'close':
      for (const client of clients.splice(0)) client.close();
      liveProxies = 0;
      marked = false;
      Object.assign(status, { open: 0, streamEnds: 0, responses: {}, bytes: 0 });
      send({ kind: 'closed' });
      break;
    case 'exit':
      for (const client of clients) client.close();
      process.exit(0);
  }
});
