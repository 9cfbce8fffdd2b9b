// The installation's typed side: each Helm chart's values as a zod schema (the one source of its
// `values.schema.json`), shared by the charts' tests and the coming `meshctl install` family.
export { chartValuesJsonSchema } from './chart-values-schema.js';
export { baseValuesSchema, type BaseValues } from './base-values.js';
export { globalValuesSchema, meshdValuesSchema, type MeshdValues } from './meshd-values.js';
export { gatewayValuesSchema, type GatewayValues } from './gateway-values.js';
export {
  MESH_OPERATOR_API_VERSION,
  MESH_OPERATOR_KIND,
  meshOperatorSchema,
  meshOperatorSpecSchema,
  type MeshOperator,
  type MeshOperatorSpec,
} from './mesh-operator.js';
export { EXIT_USAGE, buildOperatorConfig, listProfiles, mergeOverlay, parseSet, type OperatorConfigInputs } from './operator-config.js';
export { COMPONENTS, chartReleasesOf, installedStateName, type ChartRelease, type ComponentName } from './chart-values.js';
export { renderChart, renderInstallation, renderReleases, type RenderOptions, type RenderedComponent } from './render.js';
export { applyInstallation, waitUntilEstablished, COMPONENT_TITLES, type ApplyInstallationOptions, type ApplyObserver } from './apply-installation.js';
export { INSTALLED_KINDS, clusterObjectsOf, objectKey, objectsOfManifest, type ClusterObjects } from './cluster-objects.js';
export { operatorValuesSchema, type OperatorValues } from './operator-values.js';
// The install operator: MeshOperator resources reconciled into an installed control plane.
export { setupOperatorWithManager, type OperatorSetupOptions } from './operator/setup-operator.js';
export type { MeshOperatorStatus } from './operator/operator-status.js';
