import type { Server, ServerCredentials } from '@grpc/grpc-js';
import type { MeshModel } from '../controllers/index.js';
import { runnableOf, type Logging, type Manager, type MeshMetrics, type Settings } from '../controllers/runtime/index.js';
import { loadEnvoyProtos } from './envoy/index.js';
import { buildPushContext, type PushContext } from './generators/index.js';
import { newMeshGenerators } from './mesh-generators.js';
import { newSecretRefusalReporter } from './secret-refusal-reporter.js';
import { newCustomProblemReporter, newInboundSecurityFilters, newJwksResolver } from './security/index.js';
import type { XdsAuthenticator } from './xds-auth.js';
import { newXdsServer, type XdsServer } from './xds-server.js';
import {
  adminEndpointsFromSettings,
  grpcTransportFromSettings,
  jwksRefreshFromSettings,
  meshGeneratorSettingsFromSettings,
  xdsAuthPolicyFromSettings,
  xdsTuningFromSettings,
  distributionFromSettings,
  type KeepaliveFlags,
} from './xds-settings.js';

/** What the TLS listener serves besides xDS (the CA): its credentials, its service, and who its callers are. */
export interface XdsTlsEndpoint {
  /** Filled once the endpoint is ready; consulted for every authenticated stream. */
  readonly authenticators: readonly XdsAuthenticator[];
  credentials(): ServerCredentials;
  register(server: Server): void;
  /** Resolves once the credentials exist; the TLS listener binds then. */
  ready(signal: AbortSignal): Promise<void>;
}

export interface XdsSetupOptions {
  /** The model the push contexts are built from. */
  readonly model: MeshModel;
  /** New streams are refused with UNAVAILABLE until the config sources have synced. */
  readonly isReady: () => boolean;
  /** Read through `xds-settings.ts` only. */
  readonly settings: Settings<'pilot-discovery'>;
  /** `--grpcAddr` (plain text) and `--secureGRPCAddr` (TLS, with `tls`). */
  readonly grpcAddr: string;
  readonly secureGrpcAddr: string;
  readonly tls?: XdsTlsEndpoint;
  readonly keepalive: KeepaliveFlags;
  /** `--plugins`: the security filters generated; all of them when absent. */
  readonly plugins?: readonly string[];
  /** `--namespace`: callers of this namespace read every debug view. */
  readonly systemNamespace: string;
  readonly controlPlane: { id: string; version: string };
  readonly metrics: MeshMetrics<'pilot-discovery'>;
  /** Scopes `ads` and `model`. */
  readonly logging: Logging;
}

/**
 * Registers the xDS server with the manager: the mesh generators over the model (with the key sets
 * of RequestAuthentication issuers fetched and inlined), ADS and CSDS on the plain-text and TLS
 * listeners, and the push pipeline. It is the model's `ConfigUpdater`.
 */
export function setupXdsWithManager(manager: Manager, options: XdsSetupOptions): XdsServer<PushContext> {
  const { settings, metrics } = options;
  // Key sets of RequestAuthentication issuers, fetched here and inlined; a change is a full push
  // (the resolver calls back only once the manager runs, when the server below exists).
  const jwks = newJwksResolver({
    ...jwksRefreshFromSettings(settings),
    onChange: () => server.configUpdate({ full: true, reason: 'config', configsUpdated: [], startedAt: manager.clock.now() }),
    clock: manager.clock,
    log: options.logging.scope('model'),
    metrics,
  });
  manager.add(runnableOf('jwks-resolver', () => () => jwks.close()));
  const tls = options.tls;
  const distribution = distributionFromSettings(settings);
  const server: XdsServer<PushContext> = newXdsServer<PushContext>({
    protos: loadEnvoyProtos(),
    generators: newMeshGenerators({
      securityFilters: newInboundSecurityFilters({
        jwks,
        ...(options.plugins ? { plugins: options.plugins } : {}),
        onCustomProblem: newCustomProblemReporter(options.logging.scope('authorization')),
      }),
      peerAuthentication: options.plugins?.includes('authn') ?? true,
      ...meshGeneratorSettingsFromSettings(settings),
      onRefused: newSecretRefusalReporter(options.logging.scope('ads'), metrics),
    }),
    buildPushContext: () => {
      const push = buildPushContext(options.model);
      metrics.gauge('pilot_services').set(push.services.length);
      metrics.gauge('pilot_virt_services').set(push.virtualServices.length);
      return push;
    },
    isReady: options.isReady,
    tuning: xdsTuningFromSettings(settings),
    ...(distribution ? { distribution: { ...distribution, generationsOf: (push: PushContext) => push.configGenerations } } : {}),
    transport: grpcTransportFromSettings(settings, options.keepalive),
    grpcAddr: options.grpcAddr,
    ...(tls
      ? {
          secureGrpcAddr: options.secureGrpcAddr,
          tls: { credentials: () => tls.credentials() },
          secureListenerReady: (signal: AbortSignal) => tls.ready(signal),
          extraServices: (grpcServer: Server, secure: boolean) => secure && tls.register(grpcServer),
        }
      : {}),
    auth: xdsAuthPolicyFromSettings(settings, tls?.authenticators ?? []),
    clock: manager.clock,
    metrics,
    log: options.logging.scope('ads'),
    controlPlane: options.controlPlane,
    systemNamespace: options.systemNamespace,
    ...adminEndpointsFromSettings(settings),
  });
  for (const runnable of server.runnables) manager.add(runnable);
  return server;
}
