import type { ConfigAnalysisFeed } from './reconcilers/register-config-controllers.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { newConfigDirSource, type ConfigDirSource, type ConfigDirSourceOptions } from './sources/config-dir-source.js';
import { newKubeSourceSet } from './sources/kube-sources.js';
import { newKubeThrottle, throttledTransport, type KubeThrottle } from './sources/kube-throttle.js';
import { scopedLogger, type LoggerSource } from './logger-source.js';
import { newMeshConfigWatcher } from './sources/mesh-config-watcher.js';
import type { ConfigUpdater } from './model/config-updater.js';
import { newMeshModel, type MeshModelWriter, type WorkloadSelection } from './model/mesh-model.js';
import { registerConfigControllers } from './reconcilers/register-config-controllers.js';
import { configControllerSettingsFromSettings, statusWriteRateFromSettings } from './config-settings.js';
import { newConfigDirSourceSet, type SourceSet } from './sources/source-set.js';
import { MeshError, UsageError, newRealClock } from '../runtime/index.js';
import type { Clock, InformerBackoffOptions, Manager, MeshMetrics, Settings } from '../runtime/index.js';
import type { MeshConfigWatcher } from './sources/mesh-config-watcher.js';

/** What the model is built from: the mesh config (a file, then the ConfigMap) and the identity of the cluster. */
export interface MeshEnvironmentOptions {
  /** `--clusterID`. */
  clusterId: string;
  /** `--domain`: services are `<svc>.<ns>.svc.<domain>`. */
  domain: string;
  /** `--meshConfig`. */
  meshConfigFile: string;
  /** PILOT_USE_ENDPOINT_SLICE. */
  useEndpointSlices: boolean;
  /** `PILOT_ENABLE_SERVICEENTRY_SELECT_PODS` and `PILOT_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES`; default both on. */
  selection?: WorkloadSelection;
  /** The process's logging (scope `model`) or one logger. */
  log: LoggerSource;
  metrics: MeshMetrics<'pilot-discovery'>;
  clock?: Clock;
}

/**
 * The in-memory model and the mesh config that seeds it, built before anything reads or fills it
 * (as the reference's Environment): the xDS server is created over it, then the config controllers
 * that fill it. Throws a `MeshConfigError` when the `--meshConfig` file is invalid.
 */
export interface MeshEnvironment {
  /** Written by the config controllers only; everyone else reads it as a `MeshModel`. */
  readonly model: MeshModelWriter;
  readonly meshConfigWatcher: MeshConfigWatcher;
}

export function newMeshEnvironment(options: MeshEnvironmentOptions): MeshEnvironment {
  const meshConfigWatcher = newMeshConfigWatcher({
    file: options.meshConfigFile,
    log: scopedLogger(options.log, 'model'),
    clock: options.clock ?? newRealClock(),
    onError: () => options.metrics.counter('pilot_total_rejected_configs').inc({ type: 'MeshConfig' }),
  });
  const model = newMeshModel({
    domain: options.domain,
    clusterId: options.clusterId,
    useEndpointSlices: options.useEndpointSlices,
    meshConfig: meshConfigWatcher.current(),
    ...(options.selection ? { selection: options.selection } : {}),
  });
  return { model, meshConfigWatcher };
}

export interface ConfigSourcesOptions {
  environment: MeshEnvironment;
  /** `--configDir`: the mesh kinds come from this folder (and, without `kubeConfig`, every other kind too). */
  configDir?: string;
  /** From `--orchconfig`, KUBECONFIG or in-cluster: without `configDir`, everything comes from informers. */
  kubeConfig?: KubeConfig;
  /** `--registries`: `orch` reads Services, Pods and EndpointSlices. */
  registries: readonly string[];
  /** `--resync`, in milliseconds (informers only). */
  resyncMs: number;
  /** `--orchApiQPS` and `--orchApiBurst`. */
  qps: number;
  burst: number;
  /** `--namespace`: where the mesh ConfigMaps live. */
  rootNamespace: string;
  /** Read through `config-settings.ts` only. */
  settings: Settings<'pilot-discovery'>;
  /** The process's logging (scopes `model`, `validation`, `status`, `source`, `orch`) or one logger. */
  log: LoggerSource;
  metrics: MeshMetrics<'pilot-discovery'>;
  /** Where model changes go: the xDS server. */
  updater: ConfigUpdater;
  /** Tuning of the folder watcher (tests, benches). */
  configDirOptions?: Pick<ConfigDirSourceOptions, 'debounceMs' | 'rescanIntervalMs' | 'watch' | 'parseThreads' | 'parseWorkersIdleMs' | 'parsePool'>;
  /** Tuning of the informers' restart backoff (tests). */
  informerBackoff?: InformerBackoffOptions;
}

export interface ConfigSources {
  /** True once every source has synced and the model holds everything they held at start. */
  sourcesSynced(): boolean;
  waitForSync(signal?: AbortSignal): Promise<void>;
  /** The config folder, when there is one (its problems, for debug endpoints). */
  readonly configDir?: ConfigDirSource;
  /** With PILOT_ENABLE_ANALYSIS: what the daemon's analysis (`analysis/`) reads and where its messages go. */
  readonly analysisFeed?: ConfigAnalysisFeed;
}

/**
 * Registers the daemon's config side with the manager: sources (the folder and/or informers) and
 * one reconciler per kind, filling the environment's model and telling the updater. With
 * `configDir` and no `kubeConfig` the daemon needs no cluster; with a `kubeConfig`, Namespaces,
 * Services, Pods, EndpointSlices and the mesh ConfigMap come from informers, and the mesh kinds too
 * unless `configDir` is set. Throws a `UsageError` for a registry we do not implement or when there
 * is no source at all.
 */
export function setupConfigWithManager(manager: Manager, options: ConfigSourcesOptions): ConfigSources {
  const clock = manager.clock;
  const configDirPath = options.configDir ?? '';
  for (const registry of options.registries) {
    if (registry === 'Mock') throw new UsageError('registry Mock is not supported yet');
    if (registry !== 'orch') throw new UsageError(`unknown registry "${registry}": expected orch or Mock`);
  }
  if (configDirPath === '' && !options.kubeConfig) {
    throw new UsageError('no config source: give --configDir, or a Kubernetes configuration (--orchconfig, KUBECONFIG or in-cluster)');
  }

  const sourceLog = scopedLogger(options.log, 'source');
  const throttles: KubeThrottle[] = [];
  let kubeSources: SourceSet | undefined;
  if (options.kubeConfig) {
    const throttle = newKubeThrottle({ qps: options.qps, burst: options.burst, clock });
    throttles.push(newKubeThrottle({ ...statusWriteRateFromSettings(options.settings), clock }), throttle);
    kubeSources = newKubeSourceSet({
      kubeConfig: throttledTransport(options.kubeConfig, throttle),
      log: scopedLogger(options.log, 'orch'),
      clock,
      resyncMs: options.resyncMs,
      ...(options.informerBackoff ? { backoff: options.informerBackoff } : {}),
    });
  }
  let configDir: ConfigDirSource | undefined;
  let folderSources: SourceSet | undefined;
  if (configDirPath !== '') {
    configDir = newConfigDirSource({ dir: configDirPath, log: sourceLog, clock, ...options.configDirOptions });
    folderSources = newConfigDirSourceSet(configDir);
  }
  const meshKindSources = (folderSources ?? kubeSources) as SourceSet;
  const registrySources = (kubeSources ?? folderSources) as SourceSet;

  const controllers = registerConfigControllers({
    manager,
    sources: meshKindSources,
    registrySources,
    model: options.environment.model,
    updater: options.updater,
    log: options.log,
    metrics: options.metrics,
    controllerSettings: configControllerSettingsFromSettings(options.settings),
    rootNamespace: options.rootNamespace,
    meshConfigWatcher: options.environment.meshConfigWatcher,
    readRegistry: options.registries.includes('orch'),
    ...(options.kubeConfig ? { kubeConfig: options.kubeConfig, kubeThrottles: throttles } : {}),
  });
  manager.health.addReadinessCheck('config', () => {
    if (!controllers.hasSynced()) throw new MeshError('not-ready', 'config sources have not synced yet');
  });

  return {
    sourcesSynced: () => controllers.hasSynced(),
    waitForSync: (signal) => controllers.waitForSync(signal),
    ...(configDir ? { configDir } : {}),
    ...(controllers.analysisFeed ? { analysisFeed: controllers.analysisFeed } : {}),
  };
}
