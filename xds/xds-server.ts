import { ServerCredentials, experimental, type Server } from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import type { Clock, Logger, MeshMetrics, Runnable } from '../runtime/index.js';
import { addAdsService, addCsdsService, type XdsAuthPolicy } from './ads-service.js';
import { newDebugAccess } from './debug/debug-access.js';
import { defaultNewStreamsPerSecond, newStreamAdmission } from './stream-admission.js';
import { registerXdsDebugRoutes } from './debug/debug-routes.js';
import { DiscoveryServer, type DiscoveryServerOptions, type XdsTuning } from './discovery-server.js';
import type { EnvoyProtos } from './envoy/envoy-protos.js';
import type { Generator } from './generator.js';
import { grpcServerOptions, newGrpcListener, type GrpcListener, type GrpcTransportOptions } from './grpc-listener.js';
import type { ConfigUpdater, PushRequest } from './push/push-request.js';

/** The daemon's serving certificate for --secureGRPCAddr: PEMs, or credentials built elsewhere (a rotating provider). */
export type XdsTlsMaterial =
  | { readonly keyPem: string; readonly certPem: string; /** Client certificates are requested (not required) when set. */ readonly caPem?: string }
  | { readonly credentials: () => ServerCredentials };

export interface XdsServerOptions<C> {
  protos: EnvoyProtos;
  generators: readonly Generator<C>[];
  buildPushContext: (previous: C | undefined, request: PushRequest) => C | Promise<C>;
  /** The conditions a push context holds whatever the proxy (the health gauges' share of the model). */
  findingsOf?: DiscoveryServerOptions<C>['findingsOf'];
  /** The model has synced; until then new streams get UNAVAILABLE. */
  isReady?: () => boolean;
  tuning: XdsTuning;
  /** Config distribution tracking (`/debug/config_distribution`), when on. */
  distribution?: DiscoveryServerOptions<C>['distribution'];
  transport: GrpcTransportOptions;
  /** --grpcAddr (plaintext). */
  grpcAddr: string;
  /** --secureGRPCAddr; absent or '' serves no TLS listener. Needs `tls`. */
  secureGrpcAddr?: string;
  tls?: XdsTlsMaterial;
  /** Resolves when the TLS listener's certificate exists (the CA has loaded); the listener binds then. */
  secureListenerReady?: (signal: AbortSignal) => Promise<void>;
  /** Default: no authentication. */
  auth?: XdsAuthPolicy;
  /** Further services on the same listeners (the CA's certificate service on the TLS one). */
  extraServices?: (server: Server, secure: boolean) => void;
  clock: Clock;
  metrics: MeshMetrics<'pilot-discovery'>;
  /** The `ads` scope. */
  log: Logger;
  controlPlane?: { id: string; version: string };
  systemNamespace?: string;
  /** New xDS streams admitted per second (each waits up to 1 s for its turn, else RESOURCE_EXHAUSTED); 0 admits all. Default `min(15 + 5 × cores, 100)`. */
  newStreamsPerSecond?: number;
  /** UNSAFE_ENABLE_ADMIN_ENDPOINTS: serve `/debug/force_disconnect`. */
  unsafeAdminEndpoints?: boolean;
  /** Callers of the HTTP debug endpoints that read everything without a credential; default: loopback addresses. */
  isLocalDebugCaller?: (address: string | undefined) => boolean;
  /** How long the listeners wait for calls to end at shutdown; default 5 s. */
  shutdownTimeoutMs?: number;
  /** WorkloadEntry auto-registration and health reports. */
  workloadEntries?: DiscoveryServerOptions<C>['workloadEntries'];
}

export interface XdsServer<C> extends ConfigUpdater {
  readonly discovery: DiscoveryServer<C>;
  /**
   * For the daemon's manager: the gRPC listeners (group `httpServer`, ready once bound; streams
   * are refused with UNAVAILABLE until `isReady`) and the push workers (group `default`, which
   * at shutdown end the streams before the listeners close).
   */
  readonly runnables: readonly Runnable[];
  readonly plaintext: GrpcListener;
  readonly secure: GrpcListener | undefined;
  /**
   * Registers the debug endpoints and the access check of every `/debug/` route of the app
   * (call it before registering other debug routes); pass to `newHealthServer`/`newMonitoringServer` as `extraRoutes`.
   */
  debugRoutes(app: FastifyInstance): void;
}

const NO_AUTH: XdsAuthPolicy = { authenticators: [], xdsAuth: false, xdsAuthPlaintext: false, identityCheck: false };

/** The xDS server: ADS (state of the world and delta) and CSDS on the plaintext and TLS listeners, and the push pipeline. */
export function newXdsServer<C>(options: XdsServerOptions<C>): XdsServer<C> {
  const discovery = new DiscoveryServer<C>({
    protos: options.protos,
    generators: options.generators,
    buildPushContext: options.buildPushContext,
    ...(options.findingsOf ? { findingsOf: options.findingsOf } : {}),
    ...(options.isReady ? { isReady: options.isReady } : {}),
    tuning: options.tuning,
    clock: options.clock,
    metrics: options.metrics,
    log: options.log,
    ...(options.controlPlane ? { controlPlane: options.controlPlane } : {}),
    ...(options.systemNamespace ? { systemNamespace: options.systemNamespace } : {}),
    ...(options.distribution ? { distribution: options.distribution } : {}),
    ...(options.workloadEntries ? { workloadEntries: options.workloadEntries } : {}),
  });
  const auth = options.auth ?? NO_AUTH;
  const debugAccess = newDebugAccess({
    authenticators: auth.authenticators,
    systemNamespace: options.systemNamespace ?? 'mesh-system',
    log: options.log,
    ...(options.isLocalDebugCaller ? { isLocalCaller: options.isLocalDebugCaller } : {}),
  });
  const serverOptions = grpcServerOptions(options.transport);
  // One admission for both listeners: the limit is the daemon's.
  const admission = newStreamAdmission({ perSecond: options.newStreamsPerSecond ?? defaultNewStreamsPerSecond(), maxWaitMs: 1000, clock: options.clock });
  const register = (secure: boolean) => (server: Server) => {
    addAdsService(server, discovery, auth, secure, options.log, admission);
    addCsdsService(server, discovery, auth, secure);
    options.extraServices?.(server, secure);
  };
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 5000;
  const plaintext = newGrpcListener({
    name: 'xds-grpc',
    address: options.grpcAddr,
    credentials: () => ServerCredentials.createInsecure(),
    serverOptions,
    register: register(false),
    log: options.log,
    shutdownTimeoutMs,
  });
  const tls = options.tls;
  const secure =
    options.secureGrpcAddr && tls
      ? newGrpcListener({
          name: 'xds-grpc-tls',
          address: options.secureGrpcAddr,
          credentials: () => ('credentials' in tls ? tls.credentials() : staticTlsCredentials(tls)),
          serverOptions,
          register: register(true),
          log: options.log,
          shutdownTimeoutMs,
          ...(options.secureListenerReady ? { waitBeforeBinding: options.secureListenerReady } : {}),
        })
      : undefined;
  const pushes: Runnable = {
    name: 'xds-pushes',
    group: 'default',
    async start(signal) {
      discovery.startWorkers();
      if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await discovery.stop();
    },
  };
  return {
    discovery,
    runnables: secure ? [plaintext, secure, pushes] : [plaintext, pushes],
    plaintext,
    secure,
    configUpdate: (request) => discovery.configUpdate(request),
    debugRoutes: (app) => registerXdsDebugRoutes(app, discovery, { access: debugAccess, unsafeAdminEndpoints: options.unsafeAdminEndpoints === true }),
  };
}

/**
 * Fixed PEMs as certificate providers: client certificates are requested, verified against
 * `caPem`, never required. Providers must answer after grpc-js has registered its watcher,
 * hence the microtask.
 */
function staticTlsCredentials(tls: { keyPem: string; certPem: string; caPem?: string }): ServerCredentials {
  const identity: experimental.CertificateProvider = {
    addCaCertificateListener: (listener) => queueMicrotask(() => listener(tls.caPem ? { caCertificate: Buffer.from(tls.caPem) } : null)),
    removeCaCertificateListener: () => undefined,
    addIdentityCertificateListener: (listener) =>
      queueMicrotask(() => listener({ certificate: Buffer.from(tls.certPem), privateKey: Buffer.from(tls.keyPem) })),
    removeIdentityCertificateListener: () => undefined,
  };
  return experimental.createCertificateProviderServerCredentials(identity, tls.caPem ? identity : null, false);
}
