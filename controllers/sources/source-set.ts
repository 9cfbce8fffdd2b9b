import type { ResourceCheck } from '../../crds/index.js';
import type { ConfigDirSource } from './config-dir-source.js';
import type { KubeObject, Runnable, Source } from '../../runtime/index.js';

/**
 * Where the reconcilers' objects come from, per kind: the config folder or the Kubernetes
 * informers. Both give the same typed objects; the reconcilers cannot tell them apart.
 */
export interface SourceSet {
  /** The source of every object of a kind (the same source for the same kind). */
  sourceFor(apiVersion: string, kind: string): Source<KubeObject>;
  /** A source holding (at least) the ConfigMap `namespace/name`; it may hold others too. */
  configMapSource(namespace: string, name: string): Source<KubeObject>;
  /** Runnables the sources need besides themselves (the folder's shared watcher). */
  readonly runnables: readonly Runnable[];
  /** True for the Kubernetes API (status can be written back), false for the folder. */
  readonly isKubernetes: boolean;
  /** The check of a mesh-kind object done before it was served, when the source did one (the folder does). */
  checkOf?(object: KubeObject): ResourceCheck | undefined;
}

/** The config folder as a source set: every kind, ConfigMaps included, from the same watcher. */
export function newConfigDirSourceSet(configDir: ConfigDirSource): SourceSet {
  return {
    sourceFor: (apiVersion, kind) => configDir.sourceFor(apiVersion, kind),
    configMapSource: () => configDir.sourceFor('v1', 'ConfigMap'),
    runnables: [configDir.runnable],
    isKubernetes: false,
    checkOf: (object) => configDir.checkOf(object),
  };
}
