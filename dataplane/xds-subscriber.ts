import type { ChannelCredentials, ChannelOptions, Metadata } from '@grpc/grpc-js';
import type { Logger } from '../controllers/runtime/index.js';
import { newDiscoveryClient, type DiscoveryClient, type EnvoyProtos } from '../xds/envoy/index.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, SECRET_TYPE, shortType } from '../xds/envoy/index.js';
import type { AdsSecrets } from './ads-secrets.js';
import { keyResources, type ConfigState } from './config-state.js';
import { errorMessage } from '../controllers/runtime/index.js';

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
  /** Secrets over this stream (`sds_config: { ads: {} }`): subscribed for the names the listeners and clusters ask. */
  adsSecrets?: AdsSecrets;
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
  const { state, log } = options;
  let synced = false;
  let secretNames: string[] = [];
  const client: DiscoveryClient = newDiscoveryClient({
    protos: options.protos,
    target: options.target,
    credentials: options.credentials,
    channelOptions: options.channelOptions ?? {},
    ...(options.metadata ? { metadata: options.metadata } : {}),
    node: options.node,
    initial: SUBSCRIBE_ORDER.map((typeUrl) => [typeUrl, []] as const),
    reconnect: { firstMs: options.retryMs ?? 200 },
    onResponse(response) {
      if (response.type_url === SECRET_TYPE && options.adsSecrets) {
        let taken;
        try {
          taken = options.adsSecrets.apply(client.decode(response), secretNames);
        } catch (error) {
          taken = { ok: false as const, error: errorMessage(error) };
        }
        if (taken.ok) client.ack(response);
        else {
          log.warn({ type: 'sds', version: response.version_info, error: taken.error }, 'config rejected');
          client.nack(response, taken.error);
        }
        return;
      }
      let result;
      try {
        result = state.apply(response.type_url, response.version_info, keyResources(response.type_url, client.decode(response)));
      } catch (error) {
        result = { ok: false as const, error: errorMessage(error) };
      }
      const statPrefix = UPDATE_STAT_PREFIX[response.type_url];
      if (statPrefix) {
        options.stats?.inc(`${statPrefix}.update_attempt`);
        options.stats?.inc(`${statPrefix}.${result.ok ? 'update_success' : 'update_rejected'}`);
      }
      if (result.ok) {
        client.ack(response);
        const current = state.current();
        if (response.type_url === CLUSTER_TYPE) client.subscribe(ENDPOINT_TYPE, edsNamesOf(current.resources.clusters as unknown as ReadonlyMap<string, Record<string, unknown>>));
        if (response.type_url === LISTENER_TYPE) client.subscribe(ROUTE_TYPE, routeNamesOf(current.resources.listeners as unknown as Record<string, unknown>[]));
        if (options.adsSecrets && (response.type_url === LISTENER_TYPE || response.type_url === CLUSTER_TYPE)) {
          const names = options.adsSecrets.namesFor([current.resources.listeners, [...current.resources.clusters.values()]]);
          if (names.length > 0 || secretNames.length > 0) {
            secretNames = names;
            client.subscribe(SECRET_TYPE, names);
          }
        }
        if (current.versions.has(CLUSTER_TYPE) && current.versions.has(LISTENER_TYPE)) synced = true;
      } else {
        log.warn({ type: shortType(response.type_url), version: response.version_info, error: result.error }, 'config rejected');
        client.nack(response, result.error);
      }
    },
    onStreamEnd: ({ reason, retryMs }) => log.info({ reason, retryMs }, 'xDS stream ended; reconnecting'),
  });

  return {
    start: () => client.start(),
    isSynced: () => synced,
    close: () => client.close(),
  };
}
