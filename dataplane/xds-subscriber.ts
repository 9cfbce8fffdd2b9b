import { Metadata, makeGenericClientConstructor, type ChannelCredentials, type ChannelOptions, type Client, type ClientDuplexStream } from '@grpc/grpc-js';
import type { Logger } from '../controllers/runtime/index.js';
import { ADS_SERVICE, type EnvoyProtos } from '../xds/envoy/index.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, shortType } from '../xds/envoy/index.js';
import { keyResources, type ConfigState } from './config-state.js';

interface DiscoveryResponse {
  version_info: string;
  type_url: string;
  nonce: string;
  resources: { type_url: string; value: Uint8Array }[];
}

export interface XdsSubscriberOptions {
  protos: EnvoyProtos;
  /** `host:port` or `unix:///path`. */
  target: string;
  credentials: ChannelCredentials;
  channelOptions?: ChannelOptions;
  /** Per-stream call metadata (a bearer token), read at every (re)connect. */
  metadata?: () => Promise<Metadata> | Metadata;
  /** The node, as a DiscoveryRequest carries it (snake_case, metadata as a Struct). */
  node: object;
  state: ConfigState;
  log: Logger;
  /** First retry after a broken stream (half to all of it, at random); doubles up to 30 s. */
  retryMs?: number;
  /** Counts Envoy's `cluster_manager.cds.*` and `listener_manager.lds.*` update stats, which readiness checks read. */
  stats?: { inc(name: string): void };
}

/** Envoy's stat prefixes of the wildcard subscriptions. */
const UPDATE_STAT_PREFIX: Readonly<Record<string, string>> = { [CLUSTER_TYPE]: 'cluster_manager.cds', [LISTENER_TYPE]: 'listener_manager.lds' };

export interface XdsSubscriber {
  start(): void;
  /** Whether listeners and clusters were accepted at least once. */
  isSynced(): boolean;
  close(): void;
}

const SUBSCRIBE_ORDER = [CLUSTER_TYPE, LISTENER_TYPE] as const;

/** The EDS names of the accepted clusters (the service name when set, as Envoy subscribes). */
function edsNamesOf(clusters: ReadonlyMap<string, Record<string, unknown>>): string[] {
  const names = new Set<string>();
  for (const [name, cluster] of clusters) {
    if ((cluster['type'] ?? 'EDS') !== 'EDS') continue;
    const service = (cluster['eds_cluster_config'] as { service_name?: string } | undefined)?.service_name;
    names.add(service || name);
  }
  return [...names].sort();
}

/** The RDS names of the listeners' HTTP connection managers. */
export function routeNamesOf(listeners: readonly Record<string, unknown>[]): string[] {
  const names = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') {
      const rds = (value as { rds?: { route_config_name?: unknown } }).rds;
      if (typeof rds?.route_config_name === 'string') names.add(rds.route_config_name);
      Object.values(value).forEach(visit);
    }
  };
  visit(listeners);
  return [...names].sort();
}

/**
 * The data plane's ADS stream, state of the world, as Envoy subscribes: CDS and LDS as
 * wildcards, then EDS for the accepted clusters and RDS for the accepted listeners' routes.
 * Every response is compiled with the rest of the config: ACK when it compiles, NACK naming the
 * resource and field otherwise (the last good config keeps serving). A broken stream is reopened
 * with backoff and subscribes from scratch.
 */
export function newXdsSubscriber(options: XdsSubscriberOptions): XdsSubscriber {
  const { protos, state, log } = options;
  const Ctor = makeGenericClientConstructor(protos.serviceDefinition(ADS_SERVICE), 'AggregatedDiscoveryService');
  const client = new Ctor(options.target, options.credentials, options.channelOptions ?? {}) as unknown as Client & {
    StreamAggregatedResources(metadata: Metadata): ClientDuplexStream<object, DiscoveryResponse>;
  };
  let closed = false;
  let synced = false;
  let call: ClientDuplexStream<object, DiscoveryResponse> | undefined;
  let retryMs = options.retryMs ?? 200;
  let retryTimer: NodeJS.Timeout | undefined;

  const open = async (): Promise<void> => {
    if (closed) return;
    const metadata = options.metadata ? await options.metadata() : new Metadata();
    const stream = client.StreamAggregatedResources(metadata);
    call = stream;
    const subscribed = new Map<string, string[]>();
    const nonces = new Map<string, string>();
    const request = (typeUrl: string, names: string[], extra: object = {}): void => {
      subscribed.set(typeUrl, names);
      stream.write({
        node: options.node,
        type_url: typeUrl,
        resource_names: names,
        version_info: state.current().versions.get(typeUrl) ?? '',
        response_nonce: nonces.get(typeUrl) ?? '',
        ...extra,
      });
    };
    const follow = (typeUrl: string, names: string[]): void => {
      const before = subscribed.get(typeUrl);
      if (!before || before.join('\n') !== names.join('\n')) request(typeUrl, names);
    };
    stream.on('data', (response: DiscoveryResponse) => {
      retryMs = options.retryMs ?? 200;
      nonces.set(response.type_url, response.nonce);
      let result;
      try {
        const decoded = response.resources.map((any) => protos.decodeAny(any));
        result = state.apply(response.type_url, response.version_info, keyResources(response.type_url, decoded));
      } catch (error) {
        result = { ok: false as const, error: error instanceof Error ? error.message : String(error) };
      }
      const names = subscribed.get(response.type_url) ?? [];
      const statPrefix = UPDATE_STAT_PREFIX[response.type_url];
      if (statPrefix) {
        options.stats?.inc(`${statPrefix}.update_attempt`);
        options.stats?.inc(`${statPrefix}.${result.ok ? 'update_success' : 'update_rejected'}`);
      }
      if (result.ok) {
        request(response.type_url, names);
        const current = state.current();
        if (response.type_url === CLUSTER_TYPE) follow(ENDPOINT_TYPE, edsNamesOf(current.resources.clusters as unknown as ReadonlyMap<string, Record<string, unknown>>));
        if (response.type_url === LISTENER_TYPE) follow(ROUTE_TYPE, routeNamesOf(current.resources.listeners as unknown as Record<string, unknown>[]));
        if (current.versions.has(CLUSTER_TYPE) && current.versions.has(LISTENER_TYPE)) synced = true;
      } else {
        log.warn({ type: shortType(response.type_url), version: response.version_info, error: result.error }, 'config rejected');
        request(response.type_url, names, { error_detail: { code: 3, message: result.error } });
      }
    });
    const retry = (reason: string): void => {
      if (call !== stream) return;
      call = undefined;
      if (closed) return;
      // Jitter: proxies refused together (the daemon's admission rate, a restart) come back spread out.
      const delayMs = Math.round(retryMs * (0.5 + Math.random() * 0.5));
      log.info({ reason, retryMs: delayMs }, 'xDS stream ended; reconnecting');
      retryTimer = setTimeout(() => void open(), delayMs);
      retryMs = Math.min(retryMs * 2, 30_000);
    };
    stream.on('error', (error: Error) => retry(error.message));
    stream.on('end', () => retry('stream ended'));
    for (const typeUrl of SUBSCRIBE_ORDER) request(typeUrl, []);
  };

  return {
    start: () => void open(),
    isSynced: () => synced,
    close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      call?.cancel();
      client.close();
    },
  };
}
