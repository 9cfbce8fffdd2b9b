import type { KubeConfig } from '@kubernetes/client-node';
import { newConfigDirSource, type ConfigDirSource } from './config-dir-source.js';
import { newKubeSourceSet } from './kube-sources.js';
import { newKubeThrottle, throttledTransport, type KubeThrottle } from './kube-throttle.js';
import { scopedLogger, type LoggerSource } from './logger-source.js';
import { newMeshConfigWatcher } from './mesh-config-watcher.js';
import type { ConfigUpdater } from './model/config-updater.js';
import { newMeshModel, type MeshModel } from './model/mesh-model.js';
import { registerConfigControllers } from './register-config-controllers.js';
import { newRunnableCollector } from './runnable-collector.js';
import { newConfigDirSourceSet, type SourceSet } from './source-set.js';
import { UsageError, newRealClock } from './runtime/index.js';
import type { Clock, InformerBackoffOptions, MeshMetrics, Runnable, Settings } from './runtime/index.js';

export interface ConfigPipelineOptions {
  /** `--configDir`: the mesh kinds come from this folder (and, without `kubeConfig`, every other kind too). */
  configDir?: string;
  /** From `--orchconfig`, KUBECONFIG or in-cluster: without `configDir`, everything comes from informers. */
  kubeConfig?: KubeConfig;
  /** `--registries`: `orch` reads Services, Pods and EndpointSlices. */
  registries: readonly string[];
  /** `--clusterID`. */
  clusterId: string;
  /** `--domain`: services are `<svc>.<ns>.svc.<domain>`. */
  domain: string;
  /** `--resync`, in milliseconds (informers only). */
  resyncMs: number;
  /** `--orchApiQPS` and `--orchApiBurst`. */
  qps: number;
  burst: number;
  /** `--meshConfig`. */
  meshConfigFile: string;
  /** `--namespace`: where the mesh ConfigMaps live. */
  rootNamespace: string;
  settings: Settings<'pilot-discovery'>;
  /** The process's logging (scopes `model`, `validation`, `status`, `source`, `orch`) or one logger. */
  log: LoggerSource;
  metrics: MeshMetrics<'pilot-discovery'>;
  updater: ConfigUpdater;
  clock?: Clock;
  /** Tuning of the folder watcher (tests, benches). */
  configDirOptions?: { debounceMs?: number; rescanIntervalMs?: number; watch?: boolean };
  /** Tuning of the informers' restart backoff (tests). */
  informerBackoff?: InformerBackoffOptions;
}

export interface ConfigPipeline {
  /** What the push pipeline reads. */
  readonly model: MeshModel;
  /** Add every one to the daemon's manager (groups and leader election are set on each). */
  readonly runnables: readonly Runnable[];
  /** True once every source has synced and the model holds everything they held at start. */
  sourcesSynced(): boolean;
  waitForSync(signal?: AbortSignal): Promise<void>;
  /** The config folder, when there is one (its problems, for debug endpoints). */
  readonly configDir?: ConfigDirSource;
}

/**
 * The daemon's config side: sources (the folder and/or informers), one reconciler per kind, and
 * the model they fill. With `configDir` and no `kubeConfig` the daemon needs no cluster; with a
 * `kubeConfig`, Namespaces, Services, Pods, EndpointSlices and the mesh ConfigMap come from
 * informers, and the mesh kinds too unless `configDir` is set.
 *
 * Throws a `UsageError` for a registry we do not implement or when there is no source at all, and
 * a `MeshConfigError` when the `--meshConfig` file is invalid.
 */
export function newConfigPipeline(options: ConfigPipelineOptions): ConfigPipeline {
  const clock = options.clock ?? newRealClock();
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
    throttles.push(newKubeThrottle({ qps: options.settings.get('PILOT_STATUS_QPS'), burst: options.settings.get('PILOT_STATUS_BURST'), clock }), throttle);
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
    configDir = newConfigDirSource({
      dir: configDirPath,
      log: sourceLog,
      clock,
      ...options.configDirOptions,
    });
    folderSources = newConfigDirSourceSet(configDir);
  }
  const meshKindSources = (folderSources ?? kubeSources) as SourceSet;
  const registrySources = (kubeSources ?? folderSources) as SourceSet;

  const meshConfigWatcher = newMeshConfigWatcher({
    file: options.meshConfigFile,
    log: scopedLogger(options.log, 'model'),
    clock,
    onError: () => options.metrics.counter('pilot_total_rejected_configs').inc({ type: 'MeshConfig' }),
  });
  const model = newMeshModel({
    domain: options.domain,
    clusterId: options.clusterId,
    useEndpointSlices: options.settings.get('PILOT_USE_ENDPOINT_SLICE'),
    meshConfig: meshConfigWatcher.current(),
  });

  const collector = newRunnableCollector({ log: scopedLogger(options.log, 'model'), clock });
  const controllers = registerConfigControllers({
    manager: collector,
    sources: meshKindSources,
    registrySources,
    model,
    updater: options.updater,
    log: options.log,
    metrics: options.metrics,
    settings: options.settings,
    rootNamespace: options.rootNamespace,
    meshConfigWatcher,
    readRegistry: options.registries.includes('orch'),
    ...(options.kubeConfig ? { kubeConfig: options.kubeConfig, kubeThrottles: throttles } : {}),
  });

  return {
    model,
    runnables: collector.runnables,
    sourcesSynced: () => controllers.hasSynced(),
    waitForSync: (signal) => controllers.waitForSync(signal),
    ...(configDir ? { configDir } : {}),
  };
}
