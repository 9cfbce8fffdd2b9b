import type { KubeConfig } from '@kubernetes/client-node';
import { KINDS, KIND_NAMES, apiVersionOf } from '../../crds/index.js';
import { newConfigReconciler } from './config-reconciler.js';
import { newConfigStatusController, type AnalysisMessageSink, type ConfigOutcomeSink } from '../status/config-status-controller.js';
import type { ValidationMessage } from '../status/config-status.js';
import { newEndpointSliceReconciler } from './endpoint-slice-reconciler.js';
import type { InitialSyncTracker } from '../sources/initial-sync-tracker.js';
import type { KubeThrottle } from '../sources/kube-throttle.js';
import { scopedLogger, type LoggerSource } from '../logger-source.js';
import { newMeshConfigReconciler } from './mesh-config-reconciler.js';
import type { MeshConfigWatcher } from '../sources/mesh-config-watcher.js';
import type { ConfigUpdater } from '../model/config-updater.js';
import type { MeshModelWriter } from '../model/mesh-model.js';
import { newNamespaceReconciler, type RegistryReconcilerOptions } from './namespace-reconciler.js';
import { newPodReconciler } from './pod-reconciler.js';
import { newSecretReconciler } from './secret-reconciler.js';
import { newPushEmitter } from './push-emitter.js';
import { wireController, type ControllerWiring } from './reconciler-wiring.js';
import { newServiceReconciler } from './service-reconciler.js';
import type { SourceSet } from '../sources/source-set.js';
import { settledOrAborted, type Controller, type KubeObject, type Manager, type MeshMetrics } from '../../runtime/index.js';

/** What the settings tell the config controllers (`config-settings.ts` maps them). */
export interface ConfigControllerSettings {
  /** PILOT_ENABLE_STATUS: reconciliation conditions are written to the status of mesh kinds (Kubernetes mode). */
  readonly writeStatusConditions: boolean;
  /** PILOT_ENABLE_ANALYSIS: analysis messages are written there too. */
  readonly writeAnalysis: boolean;
  /** PILOT_DEBOUNCE_AFTER and PILOT_DEBOUNCE_MAX: how the analysis waits for changes to settle. */
  readonly analysisDebounceMs: number;
  readonly analysisDebounceMaxMs: number;
  /** PILOT_STATUS_MAX_WORKERS, shared by the status writers of all kinds. */
  readonly statusMaxWorkers: number;
  /** PILOT_USE_ENDPOINT_SLICE: EndpointSlices fill the registry's endpoints. */
  readonly useEndpointSlices: boolean;
  /** SHARED_MESH_CONFIG: a further mesh ConfigMap; '' for none. */
  readonly sharedMeshConfigName: string;
  /** The revision's mesh ConfigMap: `mesh`, or `mesh-<REVISION>` (as the meshd chart names it). */
  readonly meshConfigMapName: string;
}

export interface RegisterConfigControllersOptions {
  manager: Manager;
  /** Where the six mesh kinds come from. */
  sources: SourceSet;
  /** Where Namespaces, Services, Pods, EndpointSlices and the mesh ConfigMaps come from. Default: `sources`. */
  registrySources?: SourceSet;
  model: MeshModelWriter;
  updater: ConfigUpdater;
  log: LoggerSource;
  metrics: MeshMetrics<'pilot-discovery'>;
  controllerSettings: ConfigControllerSettings;
  /** `--namespace`: where the mesh ConfigMaps live. */
  rootNamespace: string;
  /** The `--meshConfig` file, already loaded. */
  meshConfigWatcher: MeshConfigWatcher;
  /** `--registries` includes `orch`: Services, Pods (and EndpointSlices) fill the registry. Default true. */
  readRegistry?: boolean;
  /** Secrets fill the model's credentials (gateways' `credentialName`). Default true. */
  readSecrets?: boolean;
  /** For status writes, when the mesh kinds come from Kubernetes. */
  kubeConfig?: KubeConfig;
  /** Every Kubernetes write waits on these (`--orchApiQPS`/`--orchApiBurst`). */
  kubeThrottles?: readonly KubeThrottle[];
}

export interface ConfigControllers {
  readonly controllers: readonly Controller[];
  /** True once every source has synced and every object it held at start has been reconciled once. */
  hasSynced(): boolean;
  waitForSync(signal?: AbortSignal): Promise<void>;
  /** With PILOT_ENABLE_ANALYSIS: what the daemon's analysis reads and where its messages go. */
  readonly analysisFeed?: ConfigAnalysisFeed;
}

/**
 * What the config side hands the daemon's analysis (PILOT_ENABLE_ANALYSIS), which lives above it
 * in `analysis/`: the sources it reads, how long it waits for changes to settle, and the status
 * writers that take its messages about each mesh resource (Kubernetes mode).
 */
export interface ConfigAnalysisFeed {
  readonly sources: SourceSet;
  readonly registrySources?: SourceSet;
  readonly secretSources?: SourceSet;
  readonly debounceMs: number;
  readonly debounceMaxMs: number;
  statusMessages(kind: string, key: { namespace: string; name: string }, messages: readonly ValidationMessage[]): void;
}

/**
 * One controller per kind, registered with the manager: the six mesh kinds, Namespace, Service,
 * Pod, EndpointSlice (with `PILOT_USE_ENDPOINT_SLICE`), Secret and the mesh ConfigMap; plus, in
 * Kubernetes mode with `PILOT_ENABLE_STATUS` or `PILOT_ENABLE_ANALYSIS`, a leader-elected status
 * writer per mesh kind. Model controllers run on every replica (each keeps its own model).
 */
export function registerConfigControllers(options: RegisterConfigControllersOptions): ConfigControllers {
  const { manager, sources, model, metrics, controllerSettings } = options;
  const registrySources = options.registrySources ?? sources;
  const clock = manager.clock;
  const modelLog = scopedLogger(options.log, 'model');
  const push = newPushEmitter(options.updater, modelLog);
  const syncErrorCounter = metrics.counter('controller_sync_errors_total');
  const wiring: ControllerWiring = {
    manager,
    log: modelLog,
    syncErrors: { counter: { inc: (labels) => syncErrorCounter.inc(labels ?? {}) }, labels: { cluster: model.clusterId } },
  };
  for (const runnable of [...sources.runnables, ...registrySources.runnables]) manager.add(runnable);
  manager.add(options.meshConfigWatcher);

  const controllers: Controller[] = [];
  const trackers: InitialSyncTracker[] = [];
  const add = (wired: { controller: Controller; tracker: InitialSyncTracker }): void => {
    controllers.push(wired.controller);
    trackers.push(wired.tracker);
  };

  const writeConditions = controllerSettings.writeStatusConditions;
  const writeAnalysis = controllerSettings.writeAnalysis;
  const statusEnabled = sources.isKubernetes && options.kubeConfig !== undefined && (writeConditions || writeAnalysis);
  const statusThrottles = options.kubeThrottles ?? [];
  const statusWorkers = Math.max(1, Math.floor(controllerSettings.statusMaxWorkers / KIND_NAMES.length));
  const analysisSinks = new Map<string, AnalysisMessageSink>();

  for (const kind of KIND_NAMES) {
    const source = sources.sourceFor(apiVersionOf(kind), kind);
    let outcomes: ConfigOutcomeSink | undefined;
    if (statusEnabled && options.kubeConfig) {
      const status = newConfigStatusController({
        manager,
        kind,
        source,
        kubeConfig: options.kubeConfig,
        throttles: statusThrottles,
        status: { conditions: writeConditions, analysis: writeAnalysis },
        workers: statusWorkers,
        log: scopedLogger(options.log, 'status'),
        clock,
        ...(wiring.syncErrors ? { syncErrors: wiring.syncErrors } : {}),
      });
      controllers.push(status.controller);
      outcomes = status.sink;
      analysisSinks.set(kind, status.sink);
    }
    const reconcile = newConfigReconciler({
      kind,
      source,
      model,
      push,
      validationLog: scopedLogger(options.log, 'validation'),
      metrics,
      clock,
      ...(outcomes ? { outcomes } : {}),
      ...(sources.checkOf ? { checkOf: (object: KubeObject) => sources.checkOf?.(object) } : {}),
    });
    add(wireController(wiring, KINDS[kind].plural, [{ source }], reconcile));
  }

  const registryOptions = (apiVersion: string, kind: string): RegistryReconcilerOptions => ({
    source: registrySources.sourceFor(apiVersion, kind),
    model,
    push,
    metrics,
    clock,
  });
  const namespaces = registryOptions('v1', 'Namespace');
  add(wireController(wiring, 'namespaces', [{ source: namespaces.source }], newNamespaceReconciler(namespaces)));
  if (options.readRegistry ?? true) {
    const services = registryOptions('v1', 'Service');
    add(wireController(wiring, 'services', [{ source: services.source }], newServiceReconciler(services)));
    const pods = registryOptions('v1', 'Pod');
    add(wireController(wiring, 'pods', [{ source: pods.source }], newPodReconciler(pods)));
    if (controllerSettings.useEndpointSlices) {
      const slices = registryOptions('discovery.k8s.io/v1', 'EndpointSlice');
      add(wireController(wiring, 'endpointslices', [{ source: slices.source }], newEndpointSliceReconciler(slices)));
    }
  }

  if (options.readSecrets ?? true) {
    const secrets = registryOptions('v1', 'Secret');
    add(wireController(wiring, 'secrets', [{ source: secrets.source }], newSecretReconciler(secrets)));
  }

  const sharedName = controllerSettings.sharedMeshConfigName;
  const meshSource = registrySources.configMapSource(options.rootNamespace, controllerSettings.meshConfigMapName);
  const sharedSource = sharedName !== '' ? registrySources.configMapSource(options.rootNamespace, sharedName) : undefined;
  const meshConfig = newMeshConfigReconciler({
    source: meshSource,
    configMapName: controllerSettings.meshConfigMapName,
    ...(sharedSource ? { sharedSource, sharedName } : {}),
    rootNamespace: options.rootNamespace,
    watcher: options.meshConfigWatcher,
    model,
    push,
    metrics,
    clock,
  });
  const watched = [
    { source: meshSource, mapFn: meshConfig.mapFn },
    ...(sharedSource && sharedSource !== meshSource ? [{ source: sharedSource, mapFn: meshConfig.mapFn }] : []),
  ];
  const meshWired = wireController(wiring, 'mesh-config', watched, meshConfig.reconcile);
  add(meshWired);
  options.meshConfigWatcher.subscribe(() => meshWired.controller.enqueue(meshConfig.key));

  const analysisFeed: ConfigAnalysisFeed | undefined = writeAnalysis
    ? {
        sources,
        ...((options.readRegistry ?? true) ? { registrySources } : {}),
        ...((options.readSecrets ?? true) ? { secretSources: registrySources } : {}),
        debounceMs: controllerSettings.analysisDebounceMs,
        debounceMaxMs: controllerSettings.analysisDebounceMaxMs,
        statusMessages: (kind, key, messages) => analysisSinks.get(kind)?.analysisMessages(key, messages),
      }
    : undefined;

  const hasSynced = (): boolean => trackers.every((tracker) => tracker.hasSynced());
  return {
    ...(analysisFeed ? { analysisFeed } : {}),
    controllers,
    hasSynced,
    // One abort listener for all the kinds, not one each (a dozen on one signal).
    waitForSync: async (signal) => {
      await settledOrAborted(Promise.all(trackers.map((tracker) => tracker.waitForSync())), signal);
    },
  };
}
