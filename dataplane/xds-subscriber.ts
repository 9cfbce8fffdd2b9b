import type { ChannelCredentials, ChannelOptions, Metadata } from '@grpc/grpc-js';
import type { Logger } from '../runtime/index.js';
import type { EnvoyProtos } from '../xds/envoy/index.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, SECRET_TYPE, routeNamesOf, shortType } from '../xds/envoy/index.js';
import type { AdsSecrets } from './ads-secrets.js';
import { newAdsFeed, type AdsFeed, type AdsUpdate } from './ads-feed.js';
import type { ConfigState } from './config-state.js';
import { errorMessage } from '../runtime/index.js';

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
  /** DELTA_GRPC: the delta flavour of ADS (the bootstrap's `ads_config.api_type`). */
  delta?: boolean;
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

/**
 * The data plane's ADS stream, as Envoy subscribes: CDS and LDS as wildcards, then EDS for the
 * accepted clusters and RDS for the accepted listeners' routes (the names gone are unsubscribed
 * and their resources dropped). State of the world, or delta when the bootstrap says DELTA_GRPC:
 * then each type is kept as a map that every response adds to, updates and removes from.
 * Every response is compiled with the rest of the config: ACK when it compiles, NACK naming the
 * resource and field otherwise (the last good config keeps serving). A broken stream is reopened
 * with backoff (delta announces the versions it holds).
 */
export function newXdsSubscriber(options: XdsSubscriberOptions): XdsSubscriber {
  const { state, log } = options;
  let synced = false;
  let secretNames: string[] = [];
  /** The names subscribed by following the accepted clusters and listeners. */
  const followed = new Map<string, readonly string[]>();
  const followedSets = new Map<string, ReadonlySet<string>>();

  /** Subscribes `typeUrl` to `names`; the resources of names gone are dropped from the config. */
  const follow = (typeUrl: string, names: readonly string[]): void => {
    const before = followed.get(typeUrl) ?? [];
    followed.set(typeUrl, names);
    const kept = new Set(names);
    followedSets.set(typeUrl, kept);
    feed.subscribe(typeUrl, names);
    const gone = before.filter((name) => !kept.has(name));
    const held = typeUrl === ENDPOINT_TYPE ? state.current().resources.endpoints : state.current().resources.routes;
    if (gone.some((name) => held.has(name))) {
      const result = state.apply(typeUrl, state.current().versions.get(typeUrl) ?? '', new Map(), { removed: gone });
      if (!result.ok) log.warn({ type: shortType(typeUrl), error: result.error }, 'config of unsubscribed names kept');
    }
  };

  /**
   * Of a routes or endpoints response, the names still subscribed, as Envoy takes them: a
   * response the server sent before it saw an unsubscription (a listener and its route removed in
   * one push) does not bring the dropped route back.
   */
  const subscribedOnly = <T>(typeUrl: string, resources: ReadonlyMap<string, T>): ReadonlyMap<string, T> => {
    const kept = typeUrl === ROUTE_TYPE || typeUrl === ENDPOINT_TYPE ? followedSets.get(typeUrl) : undefined;
    if (kept === undefined || [...resources.keys()].every((name) => kept.has(name))) return resources;
    return new Map([...resources].filter(([name]) => kept.has(name)));
  };

  const takeSecrets = (update: AdsUpdate, adsSecrets: AdsSecrets): void => {
    let taken;
    try {
      const { resources, removed } = update.read();
      taken = adsSecrets.apply([...resources.values()], secretNames, removed);
    } catch (error) {
      taken = { ok: false as const, error: errorMessage(error) };
    }
    if (taken.ok) update.ack();
    else {
      log.warn({ type: 'sds', version: update.version, error: taken.error }, 'config rejected');
      update.nack(taken.error);
    }
  };

  const feed: AdsFeed = newAdsFeed({
    delta: options.delta ?? false,
    protos: options.protos,
    target: options.target,
    credentials: options.credentials,
    channelOptions: options.channelOptions ?? {},
    ...(options.metadata ? { metadata: options.metadata } : {}),
    node: options.node,
    initial: SUBSCRIBE_ORDER.map((typeUrl) => [typeUrl, []] as const),
    reconnect: { firstMs: options.retryMs ?? 200 },
    onUpdate(update) {
      if (update.typeUrl === SECRET_TYPE && options.adsSecrets) return takeSecrets(update, options.adsSecrets);
      let result;
      try {
        const { resources, removed } = update.read();
        result = state.apply(update.typeUrl, update.version, subscribedOnly(update.typeUrl, resources), { replace: update.complete, removed });
      } catch (error) {
        result = { ok: false as const, error: errorMessage(error) };
        state.reject(update.typeUrl, result.error);
      }
      const statPrefix = UPDATE_STAT_PREFIX[update.typeUrl];
      if (statPrefix) {
        options.stats?.inc(`${statPrefix}.update_attempt`);
        options.stats?.inc(`${statPrefix}.${result.ok ? 'update_success' : 'update_rejected'}`);
      }
      if (!result.ok) {
        log.warn({ type: shortType(update.typeUrl), version: update.version, error: result.error }, 'config rejected');
        update.nack(result.error);
        return;
      }
      update.ack();
      const current = state.current();
      if (update.typeUrl === CLUSTER_TYPE)
        follow(ENDPOINT_TYPE, edsNamesOf(current.resources.clusters as unknown as ReadonlyMap<string, Record<string, unknown>>));
      if (update.typeUrl === LISTENER_TYPE) follow(ROUTE_TYPE, routeNamesOf(current.resources.listeners as unknown as Record<string, unknown>[]));
      if (options.adsSecrets && (update.typeUrl === LISTENER_TYPE || update.typeUrl === CLUSTER_TYPE)) {
        const names = options.adsSecrets.namesFor([current.resources.listeners, [...current.resources.clusters.values()]]);
        if (names.length > 0 || secretNames.length > 0) {
          secretNames = names;
          feed.subscribe(SECRET_TYPE, names);
        }
      }
      if (current.versions.has(CLUSTER_TYPE) && current.versions.has(LISTENER_TYPE)) synced = true;
    },
    onStreamEnd: ({ reason, retryMs }) => log.info({ reason, retryMs }, 'xDS stream ended; reconnecting'),
  });

  return {
    start: () => feed.start(),
    isSynced: () => synced,
    close: () => feed.close(),
  };
}
