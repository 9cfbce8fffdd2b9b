// The Kubernetes strategic merge patch, shared by the API server double (PATCH with
// application/strategic-merge-patch+json) and the sidecar injector (rendered templates merged onto
// the pod): the merge itself, the list strategies of the built-in kinds and of CRD schemas, and
// the JSON helpers they rest on. Imports no other package of ours.
export { applyStrategicMergePatch, type MergeOptions, type StrippedValues } from './strategic-merge-patch.js';
export { builtinListStrategy, schemaListStrategy, type ListStrategy, type ListStrategyResolver } from './list-strategy.js';
export { clone, deepEqual, deepFreeze, isDeeplyFrozen, isPlainObject, type JsonObject } from './json-value.js';
