import { KINDS, KIND_NAMES } from '../../crds/index.js';
import { groupKindOf } from './group-kind.js';
import { MeshError, newInformerSource } from '../../runtime/index.js';
import type { Clock, InformerBackoffOptions, KubeObject, KubeTransport, Logger, Source } from '../../runtime/index.js';
import type { SourceSet } from './source-set.js';

export interface KubeSourceSetOptions {
  /** A client-node KubeConfig, possibly wrapped by `throttledTransport`. */
  kubeConfig: KubeTransport;
  log: Logger;
  clock: Clock;
  /** `--resync`: every stored object is reconciled again this often; 0 turns it off. */
  resyncMs?: number;
  backoff?: InformerBackoffOptions;
}

interface KindPath {
  name: string;
  path: string;
  /** Narrows the watch on the server side. */
  fieldSelector?: string;
}

/** The collection paths (all namespaces) of the kinds the daemon watches, by group-kind. */
const PATHS: ReadonlyMap<string, KindPath> = new Map([
  ...KIND_NAMES.map((kind): [string, KindPath] => {
    const info = KINDS[kind];
    return [groupKindOf(`${info.group}/${info.version}`, kind), { name: info.plural, path: `/apis/${info.group}/${info.version}/${info.plural}` }];
  }),
  ['Namespace', { name: 'namespaces', path: '/api/v1/namespaces' }],
  ['Service', { name: 'services', path: '/api/v1/services' }],
  ['Pod', { name: 'pods', path: '/api/v1/pods' }],
  // As the reference's credential controller: never service account tokens or Helm release records.
  ['Secret', { name: 'secrets', path: '/api/v1/secrets', fieldSelector: 'type!=kubernetes.io/service-account-token,type!=helm.sh/release.v1' }],
  ['EndpointSlice.discovery.k8s.io', { name: 'endpointslices', path: '/apis/discovery.k8s.io/v1/endpointslices' }],
]);

/**
 * Kubernetes informers for the six mesh kinds and Namespace, Service, Pod, EndpointSlice, Secret, and the
 * mesh ConfigMaps (one informer per ConfigMap, narrowed by a field selector). Each source is made
 * on first use and shared after.
 */
export function newKubeSourceSet(options: KubeSourceSetOptions): SourceSet {
  const sources = new Map<string, Source<KubeObject>>();
  const make = (id: string, name: string, path: string, fieldSelector?: string): Source<KubeObject> => {
    let source = sources.get(id);
    if (!source) {
      source = newInformerSource<KubeObject>({
        name,
        kubeConfig: options.kubeConfig,
        path,
        log: options.log,
        clock: options.clock,
        ...(fieldSelector !== undefined ? { fieldSelector } : {}),
        ...(options.resyncMs ? { resyncMs: options.resyncMs } : {}),
        ...(options.backoff ? { backoff: options.backoff } : {}),
      });
      sources.set(id, source);
    }
    return source;
  };
  return {
    sourceFor(apiVersion, kind) {
      const groupKind = groupKindOf(apiVersion, kind);
      const known = PATHS.get(groupKind);
      if (!known) throw new MeshError('unknown-kind', `no Kubernetes source for ${groupKind}`);
      return make(groupKind, known.name, known.path, known.fieldSelector);
    },
    configMapSource(namespace, name) {
      return make(
        `ConfigMap/${namespace}/${name}`,
        `configmaps:${namespace}/${name}`,
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`,
        `metadata.name=${name}`,
      );
    },
    runnables: [],
    isKubernetes: true,
  };
}
