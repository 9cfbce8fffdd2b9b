import type { KindName } from '../../crds/index.js';

/**
 * What a push request can name as changed: a mesh policy kind, or a part of the service registry
 * (`Service` also stands for its endpoints), or the mesh config, or a Secret (gateway credentials).
 */
export type ConfigKind = KindName | 'Service' | 'Pod' | 'Namespace' | 'MeshConfig' | 'Secret';

/** A changed object: `namespace` is empty for cluster-scoped kinds (Namespace). */
export interface ConfigKey {
  readonly kind: ConfigKind;
  readonly namespace: string;
  readonly name: string;
}
