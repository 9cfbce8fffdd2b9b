import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  DAEMON_SCOPES,
  stopSignal,
  UsageError,
  loggingOptionsFrom,
  newControlZ,
  newHealthServer,
  newLogging,
  newInitializer,
  newManager,
  newMetrics,
  newMonitoringServer,
  readBuildInfo,
  type Logging,
  type Manager,
  type ManagerLeaderElectionOptions,
  type MeshMetrics,
  type Runnable,
  type Settings,
} from '../controllers/runtime/index.js';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  addRootCertPublisher,
  newCaAuthenticators,
  newCaEndpoint,
  newFolderCaStore,
  newKubeSecretCaStore,
  newBundleFetcher,
  type Authenticator,
  type CaEndpoint,
  newMeshSigner,
  newTrustBundleSet,
  parseSpiffeBundleEndpoints,
} from '../ca/index.js';
import type { FastifyInstance } from 'fastify';
import { modelDebugRoutes, newConfigPipeline, type ConfigUpdater, type MeshModel } from '../controllers/index.js';
import {
  grpcTransportFromSettings,
  loadEnvoyProtos,
  newXdsServer,
  xdsAuthPolicyFromSettings,
  xdsTuningFromSettings,
  type XdsAuthenticator,
  type XdsServer,
} from '../xds/index.js';
import { buildPushContext, type PushContext } from '../xds/index.js';
import { newMeshGenerators } from '../xds/index.js';
import { newInboundSecurityFilters, newJwksResolver } from '../xds/index.js';
import type { DiscoveryFlags } from './discovery-command.js';
import type { CliIo } from './run-cli.js';

export interface DiscoveryContext {
  settings: Settings<'pilot-discovery'>;
  io: CliIo;
  args: readonly string[];
  /** Stops the daemon; the process signals SIGINT and SIGTERM are wired when absent. */
  signal?: AbortSignal;
  /** Lease timings of the leader election (in-process runs that need a short lease); client-go's defaults otherwise. */
  leaderElectionTimings?: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
}

/**
 * Assembles the daemon: the manager with self-monitoring, introspection and health. Config
 * sources, xDS, the CA and the webhooks plug into the same manager.
 */
export async function runDiscovery(flags: DiscoveryFlags, context: DiscoveryContext): Promise<void> {
  const startedAt = Date.now();
  const loggingOptions = loggingOptionsFrom(flags);
  await checkConfigDir(flags.configDir);
  const logging = newLogging(loggingOptions, DAEMON_SCOPES);
  const log = logging.scope('default');
  const metrics = newMetrics('pilot-discovery');
  const buildInfo = readBuildInfo();
  metrics.gauge('mesh_build').set({ component: 'pilot', tag: buildInfo.version }, 1);

  const kubeConfig = await loadOrchConfig(flags.orchconfig, flags.configDir === '');
  const manager = newManager({
    log,
    shutdownDurationMs: flags.shutdownDuration,
    leaderElection: kubeConfig ? { ...leaderElectionFor(kubeConfig, flags, context.settings), ...context.leaderElectionTimings } : undefined,
    // As the reference: losing the lease stops the leader duties only; xDS, the CA and the
    // caches keep serving while the candidate campaigns again.
    leadershipLoss: 'recampaign',
  });
  // The xDS server needs the pipeline's model and the pipeline needs somewhere to send pushes.
  let xds: XdsServer<PushContext> | undefined;
  const pushes: ConfigUpdater = { configUpdate: (request) => xds?.configUpdate(request) };
  const pipeline = newConfigPipeline({
    ...(flags.configDir === '' ? {} : { configDir: flags.configDir }),
    ...(kubeConfig ? { kubeConfig } : {}),
    registries: flags.registries,
    clusterId: flags.clusterID,
    domain: flags.domain,
    resyncMs: flags.resync,
    qps: flags.orchApiQPS,
    burst: flags.orchApiBurst,
    meshConfigFile: flags.meshConfig,
    rootNamespace: flags.namespace,
    settings: context.settings,
    log: logging,
    metrics,
    updater: pushes,
  });
  const security = addCertificateAuthority({
    flags,
    settings: context.settings,
    kubeConfig,
    manager,
    metrics,
    logging,
    trustDomain: pipeline.model.meshConfig().trustDomain,
  });
  const protos = loadEnvoyProtos();
  // Key sets of RequestAuthentication issuers, fetched here and inlined; a change is a full push.
  const jwks = newJwksResolver({
    refreshIntervalMs: context.settings.get('PILOT_JWT_PUB_KEY_REFRESH_INTERVAL'),
    onChange: () => xds?.configUpdate({ full: true, reason: 'config', configsUpdated: [], startedAt: manager.clock.now() }),
    clock: manager.clock,
    log: logging.scope('model'),
    metrics,
  });
  manager.add({ name: 'jwks-resolver', group: 'default', start: async (signal) => {
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    jwks.close();
  } });
  xds = newXdsServer<PushContext>({
    protos,
    generators: newMeshGenerators({
      securityFilters: newInboundSecurityFilters({ jwks }),
      skipValidateTrustDomain: context.settings.get('PILOT_SKIP_VALIDATE_TRUST_DOMAIN'),
      scopeToNamespace: context.settings.get('PILOT_SCOPE_GATEWAY_TO_NAMESPACE'),
      useTargetPortForRoutes: context.settings.get('PILOT_USE_TARGET_PORT_FOR_GATEWAY_ROUTES'),
      filterGatewayClusters: context.settings.get('PILOT_FILTER_GATEWAY_CLUSTER_CONFIG'),
      collapseRoutes: context.settings.get('PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION'),
      stripHostPort: context.settings.get('MESH_GATEWAY_STRIP_HOST_PORT'),
    }),
    buildPushContext: () => {
      const push = buildPushContext(pipeline.model);
      metrics.gauge('pilot_services').set(push.services.length);
      metrics.gauge('pilot_virt_services').set(push.virtualServices.length);
      return push;
    },
    isReady: () => pipeline.sourcesSynced(),
    tuning: xdsTuningFromSettings(context.settings),
    transport: grpcTransportFromSettings(context.settings, flags),
    grpcAddr: flags.grpcAddr,
    ...(security
      ? {
          secureGrpcAddr: flags.secureGRPCAddr,
          tls: { credentials: () => security.endpoint().credentials() },
          secureListenerReady: security.ready,
          extraServices: (server, secure) => secure && security.endpoint().register(server),
        }
      : {}),
    auth: xdsAuthPolicyFromSettings(context.settings, security?.authenticators ?? []),
    clock: manager.clock,
    metrics,
    log: logging.scope('ads'),
    controlPlane: { id: hostname(), version: buildInfo.version },
    systemNamespace: flags.namespace,
    unsafeAdminEndpoints: context.settings.get('UNSAFE_ENABLE_ADMIN_ENDPOINTS'),
  });
  for (const runnable of xds.runnables) manager.add(runnable);
  const served = xds;
  const debugRoutes = (app: FastifyInstance): void => {
    // First: it installs the access check every `/debug/` route goes through.
    served.debugRoutes(app);
    modelDebugRoutes(pipeline.model)(app);
    endpointzRoute(pipeline.model)(app);
  };
  manager.add(
    newMonitoringServer({ address: flags.monitoringAddr, metrics, buildInfo: { ...buildInfo }, log, extraRoutes: debugRoutes }),
  );
  manager.add(
    newControlZ({
      address: flags.ctrlz_address,
      port: flags.ctrlz_port,
      logging,
      settings: context.settings,
      buildInfo: { ...buildInfo },
      args: context.args,
      log,
    }),
  );
  manager.add(
    newHealthServer({
      name: 'discovery-http',
      address: flags.httpAddr,
      health: manager.health,
      log,
      ...(context.settings.get('ENABLE_DEBUG_ON_HTTP') ? { extraRoutes: debugRoutes } : {}),
    }),
  );
  for (const runnable of pipeline.runnables) manager.add(runnable);
  manager.health.addReadinessCheck('config', () => {
    if (!pipeline.sourcesSynced()) throw new Error('config sources have not synced yet');
  });
  manager.add(
    startupTracker(() => {
      const startupSeconds = (Date.now() - startedAt) / 1000;
      metrics.gauge('startup_duration_seconds').set(startupSeconds);
      log.info({ startupSeconds }, 'discovery service ready');
    }),
  );

  const { signal, release } = stopSignal(context.signal);
  try {
    log.info({ version: buildInfo.version, configDir: flags.configDir || undefined }, 'starting discovery service');
    await manager.start(signal);
    log.info('discovery service stopped');
  } finally {
    release();
    await logging.close();
  }
}

/** `/debug/endpointz`: every service port's endpoints as the registry holds them (addresses, readiness, sidecar). */
function endpointzRoute(model: MeshModel): (app: FastifyInstance) => void {
  return (app) => {
    app.get('/debug/endpointz', async () =>
      model.registry.services().flatMap((service) =>
        service.ports.map((port) => ({
          service: service.hostname,
          port: port.port,
          endpoints: model.registry.endpoints(service.namespace, service.name, port.port),
        })),
      ),
    );
  };
}

/** Where the self-signed CA is kept in local mode, so a restart keeps the same root. */
const LOCAL_CA_DIR = './var/lib/mesh/ca';

interface CaWiring {
  flags: DiscoveryFlags;
  settings: Settings<'pilot-discovery'>;
  kubeConfig: KubeConfig | undefined;
  manager: Manager;
  metrics: MeshMetrics<'pilot-discovery'>;
  logging: Logging;
  /** From the mesh config: workload identities are `spiffe://<trust domain>/ns/<ns>/sa/<sa>`. */
  trustDomain: string;
}

/**
 * The certificate authority on `--secureGRPCAddr`: self-signed (kept in the `mesh-ca-secret`
 * secret, or a local folder without an orchestrator) or plugged from ROOT_CA_DIR. Its material may
 * need the API server: it is loaded by a start-up step that retries with backoff while the API
 * server is away (the daemon stays up, not ready), and the TLS listener binds once it is there.
 */
function addCertificateAuthority({ flags, settings, kubeConfig, manager, metrics, logging, trustDomain }: CaWiring): CaSecurity | undefined {
  const log = logging.scope('ca');
  if (!settings.get('ENABLE_CA_SERVER')) {
    log.info('the CA server is disabled (ENABLE_CA_SERVER=false)');
    return undefined;
  }
  // Filled once the CA has loaded; the xDS TLS listener, the only reader of a client certificate, binds after that.
  const authenticators: Authenticator[] = [];
  const bootstrap = newInitializer<CaEndpoint>({
    name: 'certificate-authority',
    group: 'httpServer',
    clock: manager.clock,
    log,
    init: async () => {
      const selfSignedStore = kubeConfig ? newKubeSecretCaStore({ kubeConfig, namespace: flags.namespace }) : newFolderCaStore(LOCAL_CA_DIR);
      // EXTERNAL_CA=MESHD_RA_ORCH_API: a registration authority hands CSRs to the orchestrator's signer.
      const meshSigner = await newMeshSigner({
        settings,
        log,
        rotatorLog: logging.scope('rootcertrotator'),
        metrics,
        selfSignedStore,
        trustDomain,
        ...(kubeConfig ? { kubeConfig } : {}),
      });
      if (!meshSigner) throw new UsageError('the CA server is enabled but no signer is configured');
      const ca = meshSigner.kind === 'ca' ? meshSigner.ca.authority : undefined;
      const tlsFiles = tlsFilesOf(flags);
      if (!ca && !tlsFiles.tlsFiles) {
        throw new UsageError('EXTERNAL_CA=MESHD_RA_ORCH_API needs the daemon\'s serving certificate: give --tlsCertFile and --tlsKeyFile');
      }
      // Client certificates of federated trust domains verify against their own fetched roots.
      const trustBundles = newTrustBundleSet({ trustDomain: meshSigner.trustDomain, localRoots: meshSigner.localRoots, log });
      const bundleEndpoints = parseSpiffeBundleEndpoints(settings.get('SPIFFE_BUNDLE_ENDPOINTS'));
      authenticators.push(
        ...newCaAuthenticators({
          settings,
          ...(ca ? { ca } : {}),
          trustDomain: meshSigner.trustDomain,
          clock: manager.clock,
          trustBundles,
          ...(kubeConfig ? { kubeConfig } : {}),
        }),
      );
      const endpoint = newCaEndpoint({
        ...(ca ? { ca } : {}),
        signer: meshSigner.signer,
        authenticators,
        metrics,
        log: logging.scope('serverca'),
        settings,
        cipherSuites: flags.tlsCipherSuites,
        knownClusterIds: [flags.clusterID],
        ...tlsFiles,
      });
      if (meshSigner.kind === 'ca' && meshSigner.ca.rotator) manager.add(meshSigner.ca.rotator);
      if (bundleEndpoints.length > 0) {
        manager.add(newBundleFetcher({ endpoints: bundleEndpoints, trustBundles, clock: manager.clock, log: logging.scope('trustBundle') }));
      }
      manager.add(servingCertificateRenewal(endpoint));
      if (kubeConfig) addRootCertPublisher({ manager, kubeConfig, ca: meshSigner.localRoots, log });
      return endpoint;
    },
  });
  manager.add(bootstrap);
  return { authenticators, endpoint: () => bootstrap.value(), ready: (signal) => bootstrap.waitForReady(signal) };
}

/** The CA on the xDS TLS listener: its service and serving credentials, and the callers it recognises. */
interface CaSecurity {
  /** Empty until the CA has loaded. */
  readonly authenticators: readonly XdsAuthenticator[];
  /** Throws until the CA has loaded (`ready`). */
  endpoint(): CaEndpoint;
  ready(signal: AbortSignal): Promise<void>;
}

/** Keeps the daemon's serving certificate renewed while the daemon runs (before the TLS listener binds). */
function servingCertificateRenewal(endpoint: CaEndpoint): Runnable {
  return {
    name: 'serving-certificate',
    group: 'httpServer',
    async start(signal) {
      const stop = endpoint.start();
      try {
        if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      } finally {
        stop();
      }
    },
  };
}

/** `--tlsCertFile` and `--tlsKeyFile` go together; `--caCertFile` adds client-certificate roots. */
function tlsFilesOf(flags: DiscoveryFlags): { tlsFiles?: { certFile: string; keyFile: string; caCertFile?: string } } {
  if (flags.tlsCertFile === '' && flags.tlsKeyFile === '') return {};
  if (flags.tlsCertFile === '' || flags.tlsKeyFile === '') {
    throw new UsageError('--tlsCertFile and --tlsKeyFile must be given together');
  }
  return {
    tlsFiles: {
      certFile: flags.tlsCertFile,
      keyFile: flags.tlsKeyFile,
      ...(flags.caCertFile === '' ? {} : { caCertFile: flags.caCertFile }),
    },
  };
}

/** Runs once every group before it has started: the daemon is up. */
function startupTracker(onStarted: () => void): Runnable {
  return {
    name: 'startup-tracker',
    group: 'default',
    async start(signal) {
      onStarted();
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
    },
  };
}

/**
 * The orchestrator config: `--orchconfig`; without it and without `--configDir`, what client-node
 * finds on its own (KUBECONFIG, ~/.kube/config, or the in-cluster service account). None means
 * local mode.
 */
async function loadOrchConfig(path: string, needsCluster: boolean): Promise<KubeConfig | undefined> {
  if (path === '' && !needsCluster) return undefined;
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  if (path === '') {
    kubeConfig.loadFromDefault();
    // client-node falls back to an unauthenticated localhost:8080 when it found nothing.
    if (kubeConfig.getCurrentContext() === 'loaded-context' && kubeConfig.getCurrentCluster()?.server === 'http://localhost:8080') {
      throw new UsageError('no config source: give --configDir, or --orchconfig (or KUBECONFIG, or run in a cluster)');
    }
    return kubeConfig;
  }
  try {
    kubeConfig.loadFromFile(path);
  } catch (error) {
    throw new UsageError(`invalid --orchconfig "${path}": ${(error as Error).message}`);
  }
  return kubeConfig;
}

/** Daemons with an orchestrator elect a leader on a Lease in their namespace. */
function leaderElectionFor(
  kubeConfig: KubeConfig,
  flags: DiscoveryFlags,
  settings: Settings<'pilot-discovery'>,
): ManagerLeaderElectionOptions {
  const podName = settings.get('POD_NAME') || hostname();
  return {
    kubeConfig,
    namespace: flags.namespace,
    name: 'meshd-leader',
    identity: `${podName}_${randomBytes(4).toString('hex')}`,
  };
}

async function checkConfigDir(configDir: string): Promise<void> {
  if (configDir === '') return;
  const info = await stat(configDir).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new UsageError(`invalid --configDir "${configDir}": expected an existing directory`);
  }
}

