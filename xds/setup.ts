import type { Server, ServerCredentials } from '@grpc/grpc-js';
import { pushRequestOf, type MeshModel, type WorkloadEntryController } from '../controllers/index.js';
import { runnableOf, type Logging, type Manager, type MeshMetrics, type Settings } from '../runtime/index.js';
import { loadEnvoyProtos } from './envoy/index.js';
import { newPushContextBuilder, type PushContext } from './model/index.js';
import { buildContextFindings } from './generators/index.js';
import { newMeshGenerators } from './mesh-generators.js';
import { newSecretRefusalReporter } from './secret-refusal-reporter.js';
import { newCustomProblemReporter, newInboundSecurityFilters, newJwksResolver } from './security/index.js';
import type { XdsAuthenticator } from './xds-auth.js';
import { newXdsServer, type XdsServer } from './xds-server.js';
import {
  adminEndpointsFromSettings,
  grpcTransportFromSettings,
  jwksBlockedCidrsFromSettings,
  jwksRefreshFromSettings,
  jwksRemoteFromSettings,
  meshGeneratorSettingsFromSettings,
  xdsAuthPolicyFromSettings,
  xdsTuningFromSettings,
  distributionFromSettings,
  type KeepaliveFlags,
} from './xds-settings.js';

/** The TLS listener's credentials, and what it serves besides xDS (the CA's service). */
export interface XdsTlsEndpoint {
  readonly credentials: () => ServerCredentials;
  /** Adds further services (the CA's) to the TLS listener; none when absent. */
  readonly register?: (server: Server) => void;
  /** Resolves once the credentials exist; the TLS listener binds then (at once when absent). */
  readonly ready?: (signal: AbortSignal) => Promise<void>;
}

export interface XdsSetupOptions {
  /** The model the push contexts are built from. */
  readonly model: MeshModel;
  /** New streams are refused with UNAVAILABLE until the config sources have synced. */
  readonly isReady: () => boolean;
  /** Read through `xds-settings.ts` only. */
  readonly settings: Settings<'pilot-discovery'>;
  /** `--grpcAddr` (plain text) and `--secureGRPCAddr` (TLS, with `tls`; not served without). */
  readonly grpcAddr: string;
  readonly secureGrpcAddr: string;
  readonly tls?: XdsTlsEndpoint;
  /**
   * Who xDS streams (on TLS, and on plain text with XDS_AUTH_PLAINTEXT) and remote debug callers
   * are; consulted for each, so an array filled later (once the CA has loaded) counts from then on.
   */
  readonly authenticators: readonly XdsAuthenticator[];
  readonly keepalive: KeepaliveFlags;
  /** `--plugins`: the security filters generated; all of them when absent. */
  readonly plugins?: readonly string[];
  /** `--namespace`: callers of this namespace read every debug view. */
  readonly systemNamespace: string;
  readonly controlPlane: { id: string; version: string };
  readonly metrics: MeshMetrics<'pilot-discovery'>;
  /** Scopes `ads` and `model`. */
  readonly logging: Logging;
  /** WorkloadEntry auto-registration and health (Kubernetes mode). */
  readonly workloadEntries?: WorkloadEntryController;
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
    ...jwksBlockedCidrsFromSettings(settings),
    onChange: () => server.configUpdate(pushRequestOf({ full: true, reason: 'config', configsUpdated: [], startedAt: manager.clock.now() })),
    clock: manager.clock,
    log: options.logging.scope('model'),
    metrics,
  });
  manager.add(runnableOf('jwks-resolver', () => () => jwks.close()));
  const tls = options.tls;
  const ready = tls?.ready;
  const register = tls?.register;
  const distribution = distributionFromSettings(settings);
  const pushContexts = newPushContextBuilder(options.model);
  const server: XdsServer<PushContext> = newXdsServer<PushContext>({
    protos: loadEnvoyProtos(),
    generators: newMeshGenerators({
      securityFilters: newInboundSecurityFilters({
        jwks,
        ...jwksRemoteFromSettings(settings),
        ...(options.plugins ? { plugins: options.plugins } : {}),
        onCustomProblem: newCustomProblemReporter(options.logging.scope('authorization')),
      }),
      peerAuthentication: options.plugins?.includes('authn') ?? true,
      ...meshGeneratorSettingsFromSettings(settings),
      onRefused: newSecretRefusalReporter(options.logging.scope('ads'), metrics),
    }),
    buildPushContext: (previous, request) => {
      const push = pushContexts.build(previous, request);
      metrics.gauge('pilot_services').set(push.services.length);
      metrics.gauge('pilot_virt_services').set(push.virtualServices.length);
      return push;
    },
    findingsOf: buildContextFindings,
    isReady: options.isReady,
    tuning: xdsTuningFromSettings(settings),
    ...(distribution ? { distribution: { ...distribution, generationsOf: (push: PushContext) => push.configGenerations } } : {}),
    transport: grpcTransportFromSettings(settings, options.keepalive),
    grpcAddr: options.grpcAddr,
    ...(tls
      ? {
          secureGrpcAddr: options.secureGrpcAddr,
          tls: { credentials: () => tls.credentials() },
          ...(ready ? { secureListenerReady: ready } : {}),
          ...(register ? { extraServices: (grpcServer: Server, secure: boolean) => secure && register(grpcServer) } : {}),
        }
      : {}),
    auth: xdsAuthPolicyFromSettings(settings, options.authenticators),
    clock: manager.clock,
    metrics,
    log: options.logging.scope('ads'),
    controlPlane: options.controlPlane,
    systemNamespace: options.systemNamespace,
    ...(options.workloadEntries ? { workloadEntries: options.workloadEntries } : {}),
    ...adminEndpointsFromSettings(settings),
  });
  for (const runnable of server.runnables) manager.add(runnable);
  return server;
}
