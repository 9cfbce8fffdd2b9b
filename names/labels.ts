/** The labels the mesh reads and writes on pods, namespaces and its own objects. */
export const LABELS = {
  inject: 'sidecar.mesh.io/inject',
  /** On meshed pods and their endpoints (`mesh`): auto mTLS reads it. */
  tlsMode: 'security.mesh.io/tlsMode',
  canonicalName: 'service.mesh.io/canonical-name',
  canonicalRevision: 'service.mesh.io/canonical-revision',
  network: 'topology.mesh.io/network',
  subzone: 'topology.mesh.io/subzone',
  /** In a proxy's LABELS metadata: its locality (`region/zone/subzone`); never copied onto a WorkloadEntry. */
  locality: 'mesh-locality',
  revision: 'mesh.io/rev',
  /** On a revision tag's webhook configurations: the tag. */
  tag: 'mesh.io/tag',
  /** On a namespace: `enabled` asks the default revision to inject its pods. */
  namespaceInjection: 'mesh-injection',
  /** On an EndpointSlice: the Service it belongs to. */
  serviceName: 'kubernetes.io/service-name',
  /** On every object an installation creates: `mesh`. */
  partOf: 'app.kubernetes.io/part-of',
  /** On the objects the install operator creates: the name of the MeshOperator that owns them. */
  operatorOwner: 'install.operator.mesh.io/owning-resource',
} as const;
