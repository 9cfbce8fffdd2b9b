import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { status } from '@grpc/grpc-js';
import type { Clock, Logger, MeshMetrics } from '../controllers/runtime/index.js';
import { newDebouncer, type Debouncer } from './debouncer.js';
import type { EnvoyProtos } from './envoy/envoy-protos.js';
import type { EncodedResource, GenerateRequest, GenerateResult, Generator, NamedResource } from './generator.js';
import type { Proxy } from './proxy.js';
import { mergePushRequests, toPushRequest, type ConfigKey, type ConfigUpdater, type MergedPushRequest, type PushRequest } from './push-request.js';
import { newPushQueue, type PushQueue } from './push-queue.js';
import { startPushWorkers, type PushWorkers } from './push-workers.js';
import { decideDelta, decideSotw, type DeltaRequestView, type RequestDecision, type SotwRequestView } from './should-respond.js';
import { buildClientConfig } from './sync-status.js';
import { DEBUG_NOT_AVAILABLE, debugReaderFor, type DebugReader } from './debug-access.js';
import { debugView, isDebugPath } from './debug-views.js';
import { CLIENT_CONFIG_TYPE, DEBUG_SYNCZ_TYPE, DEBUG_TYPE, ENDPOINT_TYPE, PUSH_ORDER, isWildcardType, metricType, shortType } from './envoy/type-urls.js';
import { newXdsCache, type XdsCache } from './xds-cache.js';

const DEBUG_AUTHENTICATION_REQUIRED = 'authentication required: debug information is served to authenticated streams only (the TLS port, or the plain-text one with XDS_AUTH_PLAINTEXT)';
import { XdsConnection, type XdsConnectionOptions } from './xds-connection.js';

/** The push tuning settings, read once from the settings registry (see `xdsTuningFromSettings`). */
export interface XdsTuning {
  /** PILOT_DEBOUNCE_AFTER. */
  readonly debounceAfterMs: number;
  /** PILOT_DEBOUNCE_MAX. */
  readonly debounceMaxMs: number;
  /** PILOT_ENABLE_EDS_DEBOUNCE. */
  readonly enableEdsDebounce: boolean;
  /** PILOT_PUSH_THROTTLE. */
  readonly pushThrottle: number;
  /** PILOT_ENABLE_XDS_CACHE. */
  readonly enableCache: boolean;
  /** PILOT_XDS_CACHE_SIZE. */
  readonly cacheSize: number;
  /** PILOT_XDS_SEND_TIMEOUT; 0 waits forever. */
  readonly sendTimeoutMs: number;
}

/** One immutable push context with its version. */
export interface PushSnapshot<C> {
  /** Increases with every context built. */
  readonly seq: number;
  /** `<RFC 3339 time>/<counter>`: changes on full pushes only. */
  readonly version: string;
  readonly context: C;
  readonly request: MergedPushRequest;
  readonly builtAt: number;
}

/** What `/debug/push_status` shows about the last push. */
export interface PushStatus {
  readonly version: string;
  readonly full: boolean;
  readonly reasons: Readonly<Record<string, number>>;
  readonly configsUpdated: readonly ConfigKey[];
  readonly triggeredAt: number;
  readonly contextBuiltAt: number;
  readonly proxiesQueued: number;
}

export interface DiscoveryServerOptions<C> {
  protos: EnvoyProtos;
  generators: readonly Generator<C>[];
  /** Builds the immutable push context of a push from the previous one (undefined at first). */
  buildPushContext: (previous: C | undefined, request: PushRequest) => C | Promise<C>;
  /** False until the model has synced: new streams are refused with UNAVAILABLE meanwhile. */
  isReady?: () => boolean;
  tuning: XdsTuning;
  clock: Clock;
  metrics: MeshMetrics<'pilot-discovery'>;
  /** The `ads` scope. */
  log: Logger;
  /** Sent in every response's `control_plane.identifier` (as JSON) and in syncz. */
  controlPlane?: { id: string; version: string };
  /** Authenticated callers from this namespace may read the debug type and CSDS. Default `mesh-system`. */
  systemNamespace?: string;
}

type QueueItem<C> = { request: MergedPushRequest; push: PushSnapshot<C>; enqueuedAt: number };

interface RespondMode {
  /** Answer even when the generator has nothing to say (a request always gets a response). */
  always: boolean;
  /** Delta: send every generated resource, also those the proxy already holds at that version. */
  forceAll: boolean;
}

/**
 * The xDS core, free of gRPC: connected proxies, request handling (version, nonce, ACK and
 * NACK), the debounced push pipeline, the cache of encoded resources and the push metrics.
 * The gRPC services (ads-service.ts) feed it requests and give it a way to write.
 */
export class DiscoveryServer<C = unknown> implements ConfigUpdater {
  readonly protos: EnvoyProtos;
  private readonly options: DiscoveryServerOptions<C>;
  private readonly generators: ReadonlyMap<string, Generator<C>>;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly metrics: MeshMetrics<'pilot-discovery'>;
  private readonly cache: XdsCache<EncodedResource> | undefined;
  private readonly debouncer: Debouncer;
  private readonly queue: PushQueue<XdsConnection, QueueItem<C>>;
  private readonly byId = new Map<string, XdsConnection>();
  private readonly controlPlaneJson: { identifier: string } | undefined;
  private workers: PushWorkers | undefined;
  private current: PushSnapshot<C> | undefined;
  private building: Promise<unknown> = Promise.resolve();
  private initial: Promise<PushSnapshot<C>> | undefined;
  private seq = 0;
  private versionCounter = 0;
  private connectionCounter = 0;
  private lastPushStatus: PushStatus | undefined;
  private readonly encodedShared = new WeakMap<NamedResource, { seq: number; encoded: EncodedResource }>();

  constructor(options: DiscoveryServerOptions<C>) {
    this.options = options;
    this.protos = options.protos;
    this.log = options.log;
    this.clock = options.clock;
    this.metrics = options.metrics;
    this.generators = new Map(options.generators.map((generator) => [generator.typeUrl, generator]));
    this.controlPlaneJson = options.controlPlane
      ? { identifier: JSON.stringify({ Component: 'meshd', ID: options.controlPlane.id, info: { version: options.controlPlane.version } }) }
      : undefined;
    const { tuning } = options;
    this.cache = tuning.enableCache
      ? newXdsCache<EncodedResource>(tuning.cacheSize, {
          read: (result) => this.metrics.counter('xds_cache_reads').inc({ type: result }),
          evicted: (count) => this.metrics.counter('xds_cache_evictions').inc(count),
          size: (entries) => this.metrics.gauge('xds_cache_size').set(entries),
        })
      : undefined;
    this.queue = newPushQueue<XdsConnection, QueueItem<C>>((older, newer) => ({
      request: mergePushRequests(older.request, newer.request),
      push: newer.push.seq >= older.push.seq ? newer.push : older.push,
      enqueuedAt: Math.min(older.enqueuedAt, newer.enqueuedAt),
    }));
    this.debouncer = newDebouncer({
      clock: options.clock,
      debounceAfterMs: tuning.debounceAfterMs,
      debounceMaxMs: tuning.debounceMaxMs,
      enableEdsDebounce: tuning.enableEdsDebounce,
      push: (request) => this.push(request),
      log: options.log,
    });
  }

  // ---- The ConfigUpdater seam and the push pipeline.

  configUpdate(request: PushRequest): void {
    this.debouncer.add(request);
  }

  /** Starts the push workers (PILOT_PUSH_THROTTLE of them). */
  startWorkers(): void {
    if (this.workers) return;
    this.workers = startPushWorkers(this.queue, this.options.tuning.pushThrottle, (con, item) => this.pushConnection(con, item), this.log);
  }

  /** Stops debouncing and pushing (running pushes finish), then ends every stream with UNAVAILABLE so that proxies reconnect elsewhere. */
  async stop(): Promise<void> {
    this.debouncer.stop();
    this.queue.shutDown();
    await this.workers?.done;
    for (const con of this.connections()) con.abort(status.UNAVAILABLE, 'server shutting down');
  }

  isReady(): boolean {
    return this.options.isReady?.() ?? true;
  }

  /** The push context in effect, built on first use. */
  currentPush(): Promise<PushSnapshot<C>> {
    if (this.current) return Promise.resolve(this.current);
    this.initial ??= this.buildSnapshot({ full: true, configsUpdated: [], reasons: new Map([['unknown', 1]]), startedAt: this.clock.now() })
      .catch((error: unknown) => {
        this.metrics.counter('pilot_xds_push_context_errors').inc();
        throw error;
      })
      .finally(() => (this.initial = undefined));
    return this.initial;
  }

  lastPush(): PushStatus | undefined {
    return this.lastPushStatus;
  }

  /** Connections waiting in the push queue. */
  pendingPushes(): number {
    return this.queue.pending();
  }

  private async push(request: MergedPushRequest): Promise<void> {
    for (const [reason, count] of request.reasons) this.metrics.counter('pilot_push_triggers').inc({ type: reason }, count);
    let snapshot: PushSnapshot<C>;
    try {
      snapshot = await this.buildSnapshot(request);
    } catch (error) {
      this.metrics.counter('pilot_xds_push_context_errors').inc();
      this.log.error({ error: (error as Error).message }, 'cannot build the push context; the previous one stays');
      return;
    }
    const enqueuedAt = this.clock.now();
    const connections = [...this.byId.values()];
    for (const con of connections) this.queue.enqueue(con, { request, push: snapshot, enqueuedAt });
    this.lastPushStatus = {
      version: snapshot.version,
      full: request.full,
      reasons: Object.fromEntries(request.reasons),
      configsUpdated: request.configsUpdated.slice(0, 100),
      triggeredAt: request.startedAt,
      contextBuiltAt: snapshot.builtAt,
      proxiesQueued: connections.length,
    };
    this.log.debug({ version: snapshot.version, full: request.full, proxies: connections.length }, 'push');
  }

  /** Builds contexts one at a time, each from the one before. */
  private buildSnapshot(request: MergedPushRequest): Promise<PushSnapshot<C>> {
    const result = this.building.then(async () => {
      const previous = this.current;
      const context = await this.options.buildPushContext(previous?.context, toPushRequest(request));
      const full = request.full || !previous;
      const snapshot: PushSnapshot<C> = {
        seq: ++this.seq,
        version: full ? this.nextVersion() : previous.version,
        context,
        request,
        builtAt: this.clock.now(),
      };
      if (full) this.cache?.clearAll();
      else this.cache?.clear(request.configsUpdated);
      this.current = snapshot;
      return snapshot;
    });
    this.building = result.catch(() => undefined);
    return result;
  }

  private nextVersion(): string {
    const time = new Date(this.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    return `${time}/${++this.versionCounter}`;
  }

  private async pushConnection(con: XdsConnection, item: QueueItem<C>): Promise<void> {
    this.metrics.histogram('pilot_proxy_queue_time').observe(Math.max(0, this.clock.now() - item.enqueuedAt) / 1000);
    await con.run(async () => {
      if (con.closed) return;
      // The newest context: a push queued behind a newer one must not send older config.
      const push = this.current && this.current.seq > item.push.seq ? this.current : item.push;
      for (const typeUrl of this.pushTypes(con)) {
        if (con.closed) return;
        if (!item.request.full && typeUrl !== ENDPOINT_TYPE) continue;
        const watch = con.watches.get(typeUrl);
        if (!watch) continue;
        await this.respond(
          con,
          typeUrl,
          push,
          { names: watch.wildcard ? [] : watch.names, full: item.request.full, configsUpdated: item.request.configsUpdated },
          { always: false, forceAll: false },
        );
      }
      con.lastPushVersion = push.version;
      this.metrics.histogram('pilot_proxy_convergence_time').observe(Math.max(0, this.clock.now() - item.request.startedAt) / 1000);
    });
  }

  /** The watched types in push order: CDS, EDS, LDS, RDS, SDS, then the rest with a generator. */
  private pushTypes(con: XdsConnection): string[] {
    const known = PUSH_ORDER.filter((typeUrl) => con.watches.has(typeUrl));
    const others = [...con.watches.keys()].filter((typeUrl) => !PUSH_ORDER.includes(typeUrl) && this.generators.has(typeUrl)).sort();
    return [...known, ...others];
  }

  // ---- Connections.

  connect(input: Omit<XdsConnectionOptions, 'id' | 'connectedAt'>): XdsConnection {
    const con = new XdsConnection({ ...input, id: `${input.proxy.id}-${++this.connectionCounter}`, connectedAt: this.clock.now() });
    this.byId.set(con.id, con);
    this.metrics.gauge('pilot_xds').inc({ version: versionLabel(con.proxy) });
    this.log.info({ connection: con.id, peer: con.peerAddress, stream: con.kind }, 'new connection');
    return con;
  }

  disconnect(con: XdsConnection): void {
    if (con.closed) return;
    con.closed = true;
    this.byId.delete(con.id);
    this.queue.remove(con);
    this.metrics.gauge('pilot_xds').dec({ version: versionLabel(con.proxy) });
    for (const typeUrl of con.rejecting) this.rejectGauge(typeUrl, -1);
    con.rejecting.clear();
    this.log.info({ connection: con.id }, 'connection closed');
  }

  connections(): XdsConnection[] {
    return [...this.byId.values()];
  }

  /** A connection by its id, its proxy's `<pod>.<namespace>` or its full node id (the newest wins). */
  findConnection(proxyId: string): XdsConnection | undefined {
    const direct = this.byId.get(proxyId);
    if (direct) return direct;
    // The newest stream of the proxy that subscribes to something: a debug stream opened with the
    // same node (the agent's debug port does that) holds no config.
    let found: XdsConnection | undefined;
    for (const con of this.byId.values()) {
      if (con.proxy.id !== proxyId && con.proxy.nodeId !== proxyId) continue;
      if (!found || con.watches.size > 0 || found.watches.size === 0) found = con;
    }
    return found;
  }

  /** What authenticated identities may read of the debug views; undefined when the stream is not authenticated. */
  debugReader(identities: readonly string[] | undefined): DebugReader | undefined {
    return debugReaderFor(identities, this.options.systemNamespace ?? 'mesh-system');
  }

  /** Ends a proxy's stream with UNAVAILABLE so that it reconnects (`/debug/force_disconnect`). */
  forceDisconnect(con: XdsConnection): void {
    this.log.info({ connection: con.id, proxy: con.proxy.id }, 'forced disconnect');
    con.abort(status.UNAVAILABLE, 'disconnected by an administrator');
  }

  /** The streams of proxies: those that asked for config, not only for debug views. */
  proxyConnections(): XdsConnection[] {
    return this.connections().filter((con) => !con.debugOnly);
  }

  /** Per-proxy sync status as CSDS ClientConfig messages (plain objects). */
  clientConfigs(): object[] {
    return this.proxyConnections().map((con) => buildClientConfig(con));
  }

  // ---- Requests.

  async handleSotwRequest(con: XdsConnection, request: SotwRequestView): Promise<void> {
    if (request.type_url === DEBUG_SYNCZ_TYPE) {
      await this.respondSyncz(con, request);
      return;
    }
    if (request.type_url === DEBUG_TYPE) {
      await this.respondDebug(con, request);
      return;
    }
    con.debugOnly = false;
    const decision = decideSotw(con.watches, request);
    this.apply(con, request.type_url, decision, request.response_nonce ?? '');
    if (!decision.respond) return;
    await this.respondToRequest(con, request.type_url, decision);
  }

  async handleDeltaRequest(con: XdsConnection, request: DeltaRequestView): Promise<void> {
    con.debugOnly = false;
    const decision = decideDelta(con.watches, request);
    if (decision.event === 'init') {
      // What the proxy already holds from an earlier stream: unchanged resources are not resent.
      const held = con.heldOf(request.type_url);
      held.clear();
      for (const [name, version] of Object.entries(request.initial_resource_versions ?? {})) held.set(name, { version, sentAt: 0 });
    }
    this.apply(con, request.type_url, decision, request.response_nonce ?? '');
    if (!decision.respond) return;
    await this.respondToRequest(con, request.type_url, decision);
  }

  private async respondToRequest(con: XdsConnection, typeUrl: string, decision: RequestDecision): Promise<void> {
    const push = await this.currentPush();
    const watch = con.watches.get(typeUrl);
    if (!watch || con.closed) return;
    const request: GenerateRequest = decision.subscribed
      ? { names: decision.subscribed, full: true, configsUpdated: [], delta: { subscribed: decision.subscribed, unsubscribed: decision.unsubscribed ?? [] } }
      : { names: watch.wildcard ? [] : watch.names, full: true, configsUpdated: [] };
    await this.respond(con, typeUrl, push, request, { always: true, forceAll: decision.event === 'force' });
    con.lastPushVersion = push.version;
  }

  /** Records a decision: the new watches, the metrics and logs of NACKs and stale nonces. */
  private apply(con: XdsConnection, typeUrl: string, decision: RequestDecision, nonce: string): void {
    con.watches = decision.watches;
    const type = shortType(typeUrl);
    const fields = { connection: con.id, type, nonce };
    switch (decision.event) {
      case 'nack':
        this.log.warn({ ...fields, error: decision.error }, 'ACK ERROR');
        this.metrics.counter('pilot_total_xds_rejects').inc({ type: metricType(typeUrl) });
        if (!con.rejecting.has(typeUrl)) {
          con.rejecting.add(typeUrl);
          this.rejectGauge(typeUrl, 1);
        }
        return;
      case 'stale':
        this.log.debug(fields, 'expired nonce');
        this.metrics.counter('pilot_xds_expired_nonce').inc({ type: metricType(typeUrl) });
        return;
      case 'unsubscribe':
        this.log.debug(fields, 'unsubscribe');
        con.held.delete(typeUrl);
        break;
      default:
        this.log.debug({ ...fields, event: decision.event }, 'request');
    }
    if (con.rejecting.delete(typeUrl)) this.rejectGauge(typeUrl, -1);
    if (decision.unsubscribed && decision.unsubscribed.length > 0) {
      const held = con.held.get(typeUrl);
      for (const name of decision.unsubscribed) held?.delete(name);
    }
  }

  private rejectGauge(typeUrl: string, delta: number): void {
    switch (metricType(typeUrl)) {
      case 'cds':
        this.metrics.gauge('pilot_xds_cds_reject').inc(delta);
        break;
      case 'eds':
        this.metrics.gauge('pilot_xds_eds_reject').inc(delta);
        break;
      case 'lds':
        this.metrics.gauge('pilot_xds_lds_reject').inc(delta);
        break;
      case 'rds':
        this.metrics.gauge('pilot_xds_rds_reject').inc(delta);
        break;
    }
  }

  private async respondSyncz(con: XdsConnection, request: SotwRequestView): Promise<void> {
    // The ACK (or NACK) of a debug response needs no answer.
    if (request.error_detail || (request.response_nonce ?? '') !== '') return;
    const reader = this.debugReader(con.identities);
    if (!reader) {
      con.abort(status.UNAUTHENTICATED, DEBUG_AUTHENTICATION_REQUIRED);
      return;
    }
    if (!reader.all) {
      con.abort(status.PERMISSION_DENIED, 'debug information is only available to the system namespace');
      return;
    }
    const resources = this.clientConfigs().map((config) => this.protos.encodeAny(CLIENT_CONFIG_TYPE, config));
    const version = this.current?.version ?? '';
    await this.send(con, DEBUG_SYNCZ_TYPE, {
      version_info: version,
      resources,
      type_url: DEBUG_SYNCZ_TYPE,
      nonce: `${version}/${randomUUID()}`,
      ...(this.controlPlaneJson ? { control_plane: this.controlPlaneJson } : {}),
    });
  }

  /**
   * A debug view as one resource whose bytes are its JSON. The system namespace reads every view;
   * another identity only the config dump of a proxy of its own namespace.
   */
  private async respondDebug(con: XdsConnection, request: SotwRequestView): Promise<void> {
    if (request.error_detail || (request.response_nonce ?? '') !== '') return;
    const name = request.resource_names?.[0] ?? '';
    const question = name.indexOf('?');
    const path = question < 0 ? name : name.slice(0, question);
    const query = new URLSearchParams(question < 0 ? '' : name.slice(question + 1));
    if (!isDebugPath(path)) {
      con.abort(status.INVALID_ARGUMENT, `unknown debug resource "${name}": one of syncz, adsz, push_status, config_dump?proxyID=<pod>.<namespace>`);
      return;
    }
    const reader = this.debugReader(con.identities);
    if (!reader) {
      con.abort(status.UNAUTHENTICATED, DEBUG_AUTHENTICATION_REQUIRED);
      return;
    }
    const view = debugView(this, path, query, reader);
    if (view.status === 403) {
      con.abort(status.PERMISSION_DENIED, `${DEBUG_NOT_AVAILABLE}: ${(con.identities ?? []).join(', ')}`);
      return;
    }
    const version = this.current?.version ?? '';
    await this.send(con, DEBUG_TYPE, {
      version_info: version,
      resources: [{ type_url: DEBUG_TYPE, value: Buffer.from(JSON.stringify(view.body)) }],
      type_url: DEBUG_TYPE,
      nonce: `${version}/${randomUUID()}`,
    });
  }

  // ---- Generating and sending.

  /** Generates one type for one proxy and sends it; generator failures are counted and skipped. */
  private async respond(con: XdsConnection, typeUrl: string, push: PushSnapshot<C>, request: GenerateRequest, mode: RespondMode): Promise<void> {
    const generator = this.generators.get(typeUrl);
    const watch = con.watches.get(typeUrl);
    if (!watch || con.closed) return;
    if (!generator) {
      this.log.debug({ connection: con.id, type: shortType(typeUrl) }, 'no generator for the type');
      return;
    }
    const started = performance.now();
    let result: GenerateResult | undefined;
    try {
      result = generator.generate(con.proxy, push.context, request);
    } catch (error) {
      this.internalError(con, typeUrl, error);
      return;
    }
    if (!result) {
      if (!mode.always) return;
      result = { resources: [] };
    }
    const encoded: EncodedResource[] = [];
    for (const resource of result.resources) {
      try {
        encoded.push(this.encode(typeUrl, resource, push));
      } catch (error) {
        this.internalError(con, typeUrl, error, resource.name);
      }
    }

    const nonce = `${push.version}/${randomUUID()}`;
    const held = con.heldOf(typeUrl);
    let message: object;
    let sending: EncodedResource[];
    let removed: string[] = [];
    if (con.kind === 'sotw') {
      sending = encoded;
      message = {
        version_info: push.version,
        resources: encoded.map((resource) => resource.any),
        type_url: typeUrl,
        nonce,
        ...(this.controlPlaneJson ? { control_plane: this.controlPlaneJson } : {}),
      };
    } else {
      sending = mode.forceAll ? encoded : encoded.filter((resource) => held.get(resource.name)?.version !== resource.version);
      removed = result.removed ? [...result.removed] : removedNames(encoded, held, watch, request, mode.always);
      if (!mode.always && sending.length === 0 && removed.length === 0) return;
      message = {
        system_version_info: push.version,
        resources: sending.map((resource) => ({ name: resource.name, version: resource.version, resource: resource.any })),
        type_url: typeUrl,
        removed_resources: removed,
        nonce,
        ...(this.controlPlaneJson ? { control_plane: this.controlPlaneJson } : {}),
      };
    }

    if (!(await this.send(con, typeUrl, message))) return;

    const now = this.clock.now();
    const latest = con.watches.get(typeUrl);
    if (latest) con.watches = new Map(con.watches).set(typeUrl, { ...latest, nonceSent: nonce, versionSent: push.version });
    con.lastSentAt.set(typeUrl, now);
    if (con.kind === 'sotw') {
      if (isWildcardType(typeUrl) && request.delta === undefined) held.clear();
      else if (latest && !latest.wildcard) {
        const watched = new Set(latest.names);
        for (const name of held.keys()) if (!watched.has(name)) held.delete(name);
      }
    }
    for (const name of removed) held.delete(name);
    let bytes = 0;
    for (const resource of sending) {
      held.set(resource.name, { version: resource.version, resource, sentAt: now });
      bytes += resource.any.value.byteLength;
    }
    const type = metricType(typeUrl);
    this.metrics.counter('pilot_xds_pushes').inc({ type });
    this.metrics.histogram('pilot_xds_config_size_bytes').observe({ type }, bytes);
    this.metrics.histogram('pilot_xds_push_time').observe({ type }, (performance.now() - started) / 1000);
    this.log.debug({ connection: con.id, type: shortType(typeUrl), resources: sending.length, removed: removed.length, nonce }, 'push');
  }

  private encode(typeUrl: string, resource: NamedResource, push: PushSnapshot<C>): EncodedResource {
    // A generator that hands the same resource object to many proxies of one push is answered without a lookup.
    const shared = this.encodedShared.get(resource);
    if (shared && shared.seq === push.seq) return shared.encoded;
    const encoded = this.encodeUncached(typeUrl, resource, push);
    if (resource.cacheKey !== undefined) this.encodedShared.set(resource, { seq: push.seq, encoded });
    return encoded;
  }

  private encodeUncached(typeUrl: string, resource: NamedResource, push: PushSnapshot<C>): EncodedResource {
    const cacheable = this.cache !== undefined && resource.cacheKey !== undefined;
    if (cacheable) {
      const hit = this.cache?.get(typeUrl, push.version, resource.cacheKey as string);
      if (hit) return hit.name === resource.name ? hit : { ...hit, name: resource.name };
    }
    const message = typeof resource.resource === 'function' ? (resource.resource as () => object)() : resource.resource;
    const any = this.protos.encodeAny(typeUrl, message);
    const built: EncodedResource = { name: resource.name, any, version: createHash('sha1').update(any.value).digest('base64url').slice(0, 16) };
    // Only the newest context may fill the cache: an older one would store stale bytes under the same version.
    if (cacheable && this.current?.seq === push.seq) {
      this.cache?.set(typeUrl, push.version, resource.cacheKey as string, built, resource.dependsOn);
    }
    return built;
  }

  /** Writes one response, bounded by PILOT_XDS_SEND_TIMEOUT; false when it was not sent (the stream is then ended). */
  private async send(con: XdsConnection, typeUrl: string, message: object): Promise<boolean> {
    if (con.closed) return false;
    const started = performance.now();
    const { sendTimeoutMs } = this.options.tuning;
    const writing = con.write(message).then(() => 'sent' as const);
    let timer: { cancel(): void } | undefined;
    const outcome =
      sendTimeoutMs > 0
        ? Promise.race([writing, new Promise<'timeout'>((resolve) => (timer = this.clock.setTimer(() => resolve('timeout'), sendTimeoutMs)))])
        : writing;
    writing.catch(() => undefined);
    try {
      if ((await outcome) === 'timeout') {
        this.metrics.counter('pilot_xds_write_timeout').inc();
        this.log.info({ connection: con.id, type: shortType(typeUrl) }, 'timeout writing');
        con.abort(status.DEADLINE_EXCEEDED, 'timeout sending');
        return false;
      }
      return true;
    } catch (error) {
      this.metrics.counter('pilot_xds_pushes').inc({ type: `${metricType(typeUrl)}_senderr` });
      this.log.info({ connection: con.id, type: shortType(typeUrl), error: (error as Error).message }, 'send failed');
      return false;
    } finally {
      timer?.cancel();
      this.metrics.histogram('pilot_xds_send_time').observe((performance.now() - started) / 1000);
    }
  }

  private internalError(con: XdsConnection, typeUrl: string, error: unknown, resource?: string): void {
    this.metrics.counter('pilot_total_xds_internal_errors').inc();
    this.log.error(
      { connection: con.id, type: shortType(typeUrl), ...(resource ? { resource } : {}), error: (error as Error).message },
      'generator failed; the other resources are still served',
    );
  }
}

/**
 * Delta removals when the generator does not list them: names the proxy holds (or has just
 * asked for) that the generator no longer returns. Only a full generation can tell.
 */
function removedNames(
  encoded: readonly EncodedResource[],
  held: ReadonlyMap<string, unknown>,
  watch: { wildcard: boolean; names: readonly string[] },
  request: GenerateRequest,
  answeringRequest: boolean,
): string[] {
  if (!request.full) return [];
  const generated = new Set(encoded.map((resource) => resource.name));
  if (request.delta) return request.delta.subscribed.filter((name) => !generated.has(name));
  const candidates = watch.wildcard ? [...held.keys()] : watch.names.filter((name) => answeringRequest || held.has(name));
  return candidates.filter((name) => !generated.has(name)).sort();
}

function versionLabel(proxy: Proxy): string {
  return proxy.metadata.meshVersion ?? 'unknown';
}
