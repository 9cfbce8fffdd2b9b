import { status } from '@grpc/grpc-js';
import type { WorkloadEntryController } from '../controllers/index.js';
import { errorCode, errorMessage, type Clock, type Logger, type MeshMetrics } from '../runtime/index.js';
import { connectedWorkloadOf } from './connected-workload.js';
import { newConnectionRegistry, type ConnectionRegistry } from './connection-registry.js';
import { debugReaderFor, type DebugReader } from './debug/debug-access.js';
import { newDebugRequests } from './debug/debug-requests.js';
import type { DebugSource, DistributionStatus } from './debug/debug-source.js';
import { newDistributionLedger, type DistributionLedger } from './debug/distribution-ledger.js';
import type { EnvoyProtos } from './envoy/envoy-protos.js';
import { CLUSTER_TYPE, LISTENER_TYPE, ROUTE_TYPE } from './envoy/type-urls.js';
import type { Generator } from './generator.js';
import type { ConfigUpdater, PushRequest } from './push/push-request.js';
import { newPushPipeline, type PushPipeline, type PushPipelineOptions } from './push/push-pipeline.js';
import type { PushSnapshot, PushStatus } from './push/push-snapshot.js';
import { newRequestHandler, type HealthReport, type RequestHandler } from './request-handler.js';
import { newResponseSender } from './response-sender.js';
import type { DeltaRequestView, SotwRequestView } from './should-respond.js';
import { buildClientConfig } from './sync-status.js';
import type { XdsCallbacks } from './xds-callbacks.js';
import type { XdsConnection, XdsConnectionOptions } from './xds-connection.js';
import { buildMetricsCallbacks } from './xds-metrics.js';

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
  /** PILOT_XDS_CACHE_STATS: the cache's reads, evictions and size are recorded (xds_cache_*); off by default, as the reference. */
  readonly cacheStats: boolean;
}

export interface DiscoveryServerOptions<C> {
  protos: EnvoyProtos;
  generators: readonly Generator<C>[];
  /** Builds the immutable push context of a push from the previous one (undefined at first). */
  buildPushContext: (previous: C | undefined, request: PushRequest) => C | Promise<C>;
  /** The conditions a push context holds whatever the proxy: they seed each push's findings (push/push-findings.ts). */
  findingsOf?: PushPipelineOptions<C>['findingsOf'];
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
  /** PILOT_ENABLE_CONFIG_DISTRIBUTION_TRACKING: which config generation each push version carried (`/debug/config_distribution`). */
  distribution?: { readonly retentionMs: number; generationsOf(context: C): ReadonlyMap<string, string> };
  /** WorkloadEntry auto-registration and health: told of every stream's start and end and of health reports. */
  workloadEntries?: WorkloadEntryController;
}

/**
 * The xDS core, free of gRPC: connected proxies (connection-registry.ts), request handling
 * (request-handler.ts, debug-requests.ts), the debounced push pipeline (push-pipeline.ts), the
 * responder (response-sender.ts: generation, encoding through encoding/, sending) and the push metrics
 * (xds-metrics.ts). The gRPC services (ads-service.ts) feed it requests and give it a way to write.
 */
export class DiscoveryServer<C = unknown> implements ConfigUpdater, DebugSource {
  readonly protos: EnvoyProtos;
  private readonly options: DiscoveryServerOptions<C>;
  private readonly log: Logger;
  private readonly registry: ConnectionRegistry;
  private readonly pipeline: PushPipeline<C>;
  private readonly requests: RequestHandler;
  private readonly ledger: DistributionLedger | undefined;
  private readonly callbacks: XdsCallbacks;

  constructor(options: DiscoveryServerOptions<C>) {
    const { tuning, clock, log } = options;
    this.options = options;
    this.protos = options.protos;
    this.log = log;
    const callbacks = buildMetricsCallbacks(options.metrics, { cacheStats: tuning.cacheStats });
    this.callbacks = callbacks;
    this.registry = newConnectionRegistry({ clock, callbacks, log });
    const sender = newResponseSender<C>({
      protos: options.protos,
      generators: options.generators,
      cacheSize: tuning.enableCache ? tuning.cacheSize : undefined,
      sendTimeoutMs: tuning.sendTimeoutMs,
      current: () => this.pipeline.current(),
      ...(options.controlPlane ? { controlPlane: options.controlPlane } : {}),
      clock,
      callbacks,
      log,
    });
    const distribution = options.distribution;
    this.ledger = distribution ? newDistributionLedger(distribution, clock) : undefined;
    this.pipeline = newPushPipeline<C>({
      buildPushContext: options.buildPushContext,
      ...(options.findingsOf ? { findingsOf: options.findingsOf } : {}),
      ...(distribution
        ? { onNewVersion: (snapshot: PushSnapshot<C>) => this.ledger?.record(snapshot.version, distribution.generationsOf(snapshot.context)) }
        : {}),
      connections: () => this.registry.connections(),
      sender,
      debounceAfterMs: tuning.debounceAfterMs,
      debounceMaxMs: tuning.debounceMaxMs,
      enableEdsDebounce: tuning.enableEdsDebounce,
      pushThrottle: tuning.pushThrottle,
      clock,
      callbacks,
      log,
    });
    const debug = newDebugRequests({
      source: this,
      debugReader: (identities) => this.debugReader(identities),
      clientConfigs: () => this.clientConfigs(),
      version: () => this.pipeline.current()?.version ?? '',
      sender,
    });
    const workloadEntries = options.workloadEntries;
    this.requests = newRequestHandler<C>({
      registry: this.registry,
      sender,
      currentPush: () => this.pipeline.currentPush(),
      debug,
      callbacks,
      clock,
      log,
      ...(workloadEntries ? { onHealth: (con: XdsConnection, report: HealthReport) => workloadEntries.reportHealth(con.id, report) } : {}),
    });
  }

  // ---- The ConfigUpdater seam and the push pipeline.

  configUpdate(request: PushRequest): void {
    this.callbacks.onConfigUpdate?.(request);
    this.pipeline.configUpdate(request);
  }

  /** Starts the push workers (PILOT_PUSH_THROTTLE of them). */
  startWorkers(): void {
    this.pipeline.startWorkers();
  }

  /** Stops debouncing and pushing (running pushes finish), then ends every stream with UNAVAILABLE so that proxies reconnect elsewhere. */
  async stop(): Promise<void> {
    await this.pipeline.stop();
    for (const con of this.connections()) con.abort(status.UNAVAILABLE, 'server shutting down');
  }

  isReady(): boolean {
    return this.options.isReady?.() ?? true;
  }

  /** The push context in effect, built on first use. */
  currentPush(): Promise<PushSnapshot<C>> {
    return this.pipeline.currentPush();
  }

  lastPush(): PushStatus | undefined {
    return this.pipeline.lastPush();
  }

  configDistribution(resource: string): DistributionStatus[] | undefined {
    const ledger = this.ledger;
    if (!ledger) return undefined;
    const acked = (con: XdsConnection, typeUrl: string): string => {
      const version = con.watches.get(typeUrl)?.versionAcked ?? '';
      return version === '' ? '' : (ledger.generationAt(version, resource) ?? '');
    };
    return this.proxyConnections().map((con) => ({
      proxy: con.proxy.id,
      cluster_acked: acked(con, CLUSTER_TYPE),
      listener_acked: acked(con, LISTENER_TYPE),
      route_acked: acked(con, ROUTE_TYPE),
    }));
  }

  /** Connections waiting in the push queue. */
  pendingPushes(): number {
    return this.pipeline.pendingPushes();
  }

  // ---- Connections.

  connect(input: Omit<XdsConnectionOptions, 'id' | 'connectedAt'>): XdsConnection {
    return this.registry.connect(input);
  }

  disconnect(con: XdsConnection): void {
    if (this.registry.disconnect(con)) {
      this.pipeline.remove(con);
      this.options.workloadEntries?.disconnect(con.id, this.options.clock.now());
    }
  }

  /**
   * Registers the stream's workload outside Kubernetes (its WorkloadEntry); the gRPC status that
   * ends the stream when registration is refused or fails, undefined otherwise.
   */
  async registerWorkload(con: XdsConnection): Promise<{ code: number; details: string } | undefined> {
    const workloadEntries = this.options.workloadEntries;
    if (!workloadEntries) return undefined;
    try {
      await workloadEntries.connect(con.id, connectedWorkloadOf(con));
      return undefined;
    } catch (error) {
      const code = errorCode(error);
      const grpcCode =
        code === 'workload-identity-mismatch'
          ? status.PERMISSION_DENIED
          : code === 'workload-group-not-found' || code === 'workload-entry-not-found'
            ? status.FAILED_PRECONDITION
            : status.UNAVAILABLE;
      return { code: grpcCode, details: errorMessage(error) };
    }
  }

  connections(): XdsConnection[] {
    return this.registry.connections();
  }

  /** A connection by its id, its proxy's `<pod>.<namespace>` or its full node id (the newest wins). */
  findConnection(proxyId: string): XdsConnection | undefined {
    return this.registry.findConnection(proxyId);
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
    return this.registry.proxyConnections();
  }

  /** Per-proxy sync status as CSDS ClientConfig messages (plain objects). */
  clientConfigs(): object[] {
    return this.proxyConnections().map((con) => buildClientConfig(con));
  }

  // ---- Requests.

  handleSotwRequest(con: XdsConnection, request: SotwRequestView): Promise<void> {
    return this.requests.handleSotwRequest(con, request);
  }

  handleDeltaRequest(con: XdsConnection, request: DeltaRequestView): Promise<void> {
    return this.requests.handleDeltaRequest(con, request);
  }
}
