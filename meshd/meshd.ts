import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { setupCaDisabledWithManager, setupCaWithManager } from '../ca/index.js';
import { analysisDebugRoutes, setupAnalysisWithManager } from '../analysis/index.js';
import { modelDebugRoutes, newMeshEnvironment, newWorkloadEntries, setupConfigWithManager } from '../controllers/index.js';
import {
  DAEMON_SCOPES,
  newControlZ,
  newHealthServer,
  newLogging,
  newManager,
  newMetrics,
  newMonitoringServer,
  readBuildInfo,
  parseListenAddress,
  registerProfilingRoutes,
  runnableOf,
  type Logging,
  type Manager,
} from '../runtime/index.js';
import { setupWebhookWithManager } from '../webhook/index.js';
import { setupXdsWithManager } from '../xds/index.js';
import { checkConfigDir, leaderElectionFor, loadKubeConfig, tlsFilesOf } from './kube-config.js';
import { reportUnservedTls, secureServingOf } from './secure-serving.js';
import type { MeshdOptions } from './options.js';

/** The assembled daemon: start its manager; close its logging once the manager has stopped. */
export interface Meshd {
  readonly manager: Manager;
  readonly logging: Logging;
}

/**
 * Assembles pilot-discovery: the manager with self-monitoring, introspection and health, and each
 * part registered through its own `setup…WithManager`: the environment (model and mesh config),
 * the certificate authority, the xDS server over the model, and the config controllers that fill
 * it and tell the xDS server. Throws a `UsageError` for options that cannot work.
 */
export async function newMeshd(options: MeshdOptions): Promise<Meshd> {
  const startedAt = Date.now();
  await checkConfigDir(options.configDir);
  const logging = newLogging(options.logging, DAEMON_SCOPES);
  const log = logging.scope('default');
  const { settings } = options;
  const metrics = newMetrics('pilot-discovery');
  const buildInfo = readBuildInfo();
  metrics.gauge('mesh_build').set({ component: 'pilot', tag: buildInfo.version }, 1);

  const kubeConfig = await loadKubeConfig(options.kubeConfigPath, options.configDir === '');
  const manager = newManager({
    log,
    shutdownDurationMs: options.shutdownDurationMs,
    leaderElection: kubeConfig ? leaderElectionFor(kubeConfig, options) : undefined,
    // As the reference: losing the lease stops the leader duties only; xDS, the CA and the caches
    // keep serving while the candidate campaigns again.
    leadershipLoss: 'recampaign',
  });

  const environment = newMeshEnvironment({
    clusterId: options.clusterId,
    domain: options.domain,
    meshConfigFile: options.meshConfigFile,
    useEndpointSlices: settings.get('PILOT_USE_ENDPOINT_SLICE'),
    selection: {
      serviceEntriesSelectPods: settings.get('PILOT_ENABLE_SERVICEENTRY_SELECT_PODS'),
      servicesSelectWorkloadEntries: settings.get('PILOT_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES'),
    },
    log: logging,
    metrics,
    clock: manager.clock,
  });
  const tlsFiles = tlsFilesOf(options);
  const security = {
    settings,
    ...(kubeConfig ? { kubeConfig } : {}),
    trustDomain: environment.model.meshConfig().trustDomain,
    cipherSuites: options.tlsCipherSuites,
    ...(tlsFiles ? { tlsFiles } : {}),
    logging,
  };
  const ca = setupCaWithManager(manager, { ...security, namespace: options.namespace, clusterId: options.clusterId, metrics });
  // Without a CA the files serve TLS alone, and callers still authenticate as the reference has them.
  const secure = secureServingOf(ca ? { ca } : { caDisabled: setupCaDisabledWithManager(manager, security) });
  reportUnservedTls(log, secure, options);
  // The reference's identifier names the pod (POD_NAME, its hostname in a cluster).
  const instanceId = settings.get('POD_NAME') || hostname();
  const workloadEntries = newWorkloadEntries({
    settings,
    ...(kubeConfig ? { kubeConfig } : {}),
    instanceId,
    maxConnectionAgeMs: options.keepalive.keepaliveMaxServerConnectionAge,
    clock: manager.clock,
    logging,
    metrics,
  });
  for (const runnable of workloadEntries?.runnables ?? []) manager.add(runnable);
  const xds = setupXdsWithManager(manager, {
    model: environment.model,
    // Asked per new stream, once the manager runs: the config controllers below exist by then.
    isReady: () => config.sourcesSynced(),
    settings,
    grpcAddr: options.grpcAddr,
    secureGrpcAddr: options.secureGrpcAddr,
    ...(secure.xdsTls ? { tls: secure.xdsTls } : {}),
    authenticators: secure.authenticators,
    keepalive: options.keepalive,
    ...(options.plugins ? { plugins: options.plugins } : {}),
    systemNamespace: options.namespace,
    controlPlane: { id: instanceId, version: buildInfo.version },
    metrics,
    logging,
    ...(workloadEntries ? { workloadEntries } : {}),
  });
  const config = setupConfigWithManager(manager, {
    environment,
    ...(options.configDir === '' ? {} : { configDir: options.configDir }),
    ...(kubeConfig ? { kubeConfig } : {}),
    registries: options.registries,
    resyncMs: options.resyncMs,
    qps: options.kubeApiQps,
    burst: options.kubeApiBurst,
    rootNamespace: options.namespace,
    settings,
    log: logging,
    metrics,
    updater: xds,
  });
  const analysis = config.analysisFeed
    ? setupAnalysisWithManager(manager, {
        feed: config.analysisFeed,
        model: environment.model,
        rootNamespace: options.namespace,
        log: logging.scope('analysis'),
      })
    : undefined;

  const serving = secure.webhooks;
  const webhooks = serving
    ? setupWebhookWithManager(manager, {
        settings,
        address: parseListenAddress(options.httpsAddr),
        serving,
        ...(kubeConfig ? { kubeConfig } : {}),
        namespace: options.namespace,
        meshConfig: () => environment.model.meshConfig(),
        metrics,
        logging,
      })
    : undefined;

  const debugRoutes = (app: FastifyInstance): void => {
    // First: it installs the access check every `/debug/` route goes through.
    xds.debugRoutes(app);
    modelDebugRoutes(environment.model)(app);
    if (analysis) analysisDebugRoutes(analysis)(app);
    webhooks?.debugRoutes(app);
    if (options.profile) registerProfilingRoutes(app, 'meshd');
  };
  manager.add(newMonitoringServer({ address: options.monitoringAddr, metrics, buildInfo: { ...buildInfo }, log, extraRoutes: debugRoutes }));
  manager.add(newControlZ({ address: options.ctrlzAddress, port: options.ctrlzPort, logging, settings, buildInfo: { ...buildInfo }, args: options.args, log }));
  manager.add(
    newHealthServer({
      name: 'discovery-http',
      address: options.httpAddr,
      health: manager.health,
      log,
      ...(settings.get('ENABLE_DEBUG_ON_HTTP') ? { extraRoutes: debugRoutes } : {}),
    }),
  );
  // Started after every other group: the daemon is up.
  manager.add(
    runnableOf('startup-tracker', () => {
      const startupSeconds = (Date.now() - startedAt) / 1000;
      metrics.gauge('startup_duration_seconds').set(startupSeconds);
      log.info({ startupSeconds }, 'discovery service ready');
    }),
  );
  log.info({ version: buildInfo.version, configDir: options.configDir || undefined }, 'starting discovery service');
  return { manager, logging };
}
