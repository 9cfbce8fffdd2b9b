import { existsSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { errorMessage, newInformerSource, runnableOf, type Clock, type KubeObject, type Logger, type Manager } from '../runtime/index.js';
import { BUILTIN_INJECTOR_CONFIG, type InjectorConfigText } from './inject/index.js';
import { INJECTOR_CONFIG_MAP_NAME, revisionedName } from '../names/index.js';

/** The injector ConfigMap of a revision: `mesh-sidecar-injector`, or `mesh-sidecar-injector-<rev>`. */
export function injectorConfigMapName(revision: string): string {
  return revisionedName(INJECTOR_CONFIG_MAP_NAME, revision);
}

/** Where local mode reads the injector's `config` and `values` files (the reference's injection folder). */
export const LOCAL_INJECT_DIR = './var/lib/mesh/inject';

/** The injector's templates and values as text, and where they came from (for logs and `/debug/inject`). */
export interface InjectorConfigVersion {
  readonly text: InjectorConfigText;
  readonly origin: string;
}

export interface InjectorConfigSourceOptions {
  readonly manager: Manager;
  /** Kubernetes mode: the ConfigMap in `namespace`. */
  readonly kubeConfig?: KubeConfig;
  readonly namespace: string;
  readonly revision: string;
  /** Local mode: the folder with `config` and `values`. Default LOCAL_INJECT_DIR. */
  readonly dir?: string;
  readonly log: Logger;
  readonly clock: Clock;
  /** Told of every version, the first (the built-in defaults until something is read) at once. */
  readonly onVersion: (version: InjectorConfigVersion) => void;
}

const BUILTIN: InjectorConfigVersion = { text: BUILTIN_INJECTOR_CONFIG, origin: 'built-in defaults' };

/**
 * Feeds the injector its templates and values: the revision's ConfigMap (keys `config` and
 * `values`) in Kubernetes mode, the files `config` and `values` of the local folder otherwise,
 * each watched; the built-in defaults (the ones the Helm chart ships) when there are none.
 */
export function addInjectorConfigSource(options: InjectorConfigSourceOptions): InjectorConfigSource {
  const { manager, log } = options;
  options.onVersion(BUILTIN);
  if (options.kubeConfig) {
    const kubeConfig = options.kubeConfig;
    const name = injectorConfigMapName(options.revision);
    const configMaps = newInformerSource<KubeObject & { data?: Record<string, string> }>({
      name: 'injector-configmap',
      kubeConfig: options.kubeConfig,
      path: `/api/v1/namespaces/${options.namespace}/configmaps`,
      fieldSelector: `metadata.name=${name}`,
      log,
      clock: options.clock,
    });
    manager.add(configMaps);
    configMaps.subscribe((event) => {
      if (event.type === 'delete') {
        log.warn({ configMap: name }, 'the injector ConfigMap was deleted; using the built-in defaults');
        options.onVersion(BUILTIN);
        return;
      }
      const data = event.object.data ?? {};
      options.onVersion({ text: { config: data['config'] ?? '', values: data['values'] ?? '' }, origin: `ConfigMap ${options.namespace}/${name}` });
    });
    return { loaded: (signal) => loadConfigMapOnce(kubeConfig, options, name, signal) };
  }
  const dir = options.dir ?? LOCAL_INJECT_DIR;
  const read = (): void => {
    const configFile = join(dir, 'config');
    if (!existsSync(configFile)) return;
    try {
      const valuesFile = join(dir, 'values');
      options.onVersion({
        text: { config: readFileSync(configFile, 'utf8'), values: existsSync(valuesFile) ? readFileSync(valuesFile, 'utf8') : '' },
        origin: `folder ${dir}`,
      });
    } catch (error) {
      log.error({ dir, error: errorMessage(error) }, 'could not read the injector config');
    }
  };
  // Read before anything serves, as the reference loads its templates before the webhook starts.
  read();
  manager.add(
    runnableOf('injector-config-files', () => {
      if (!existsSync(dir)) return undefined;
      const watcher: FSWatcher = watch(dir, { persistent: false }, () => read());
      return () => watcher.close();
    }),
  );
  return { loaded: () => Promise.resolve() };
}

/** Resolves once the injector's first configuration is in place (the webhook serves only then). */
export interface InjectorConfigSource {
  loaded(signal: AbortSignal): Promise<void>;
}

/** One read of the ConfigMap before serving, retried while the API server is away; absent means the built-in defaults. */
async function loadConfigMapOnce(kubeConfig: KubeConfig, options: InjectorConfigSourceOptions, name: string, signal: AbortSignal): Promise<void> {
  const { ApiException, CoreV1Api } = await import('@kubernetes/client-node');
  const api = kubeConfig.makeApiClient(CoreV1Api);
  let retryMs = 500;
  while (!signal.aborted) {
    try {
      const configMap = await api.readNamespacedConfigMap({ name, namespace: options.namespace });
      const data = configMap.data ?? {};
      options.onVersion({ text: { config: data['config'] ?? '', values: data['values'] ?? '' }, origin: `ConfigMap ${options.namespace}/${name}` });
      return;
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) {
        options.log.info({ configMap: `${options.namespace}/${name}` }, 'no injector ConfigMap; injecting with the built-in defaults');
        return;
      }
      options.log.warn({ configMap: `${options.namespace}/${name}`, error: errorMessage(error) }, 'could not read the injector ConfigMap; retrying');
      await new Promise<void>((resolve) => {
        const timer = options.clock.setTimer(resolve, retryMs);
        signal.addEventListener('abort', () => (timer.cancel(), resolve()), { once: true });
      });
      retryMs = Math.min(retryMs * 2, 30_000);
    }
  }
}
