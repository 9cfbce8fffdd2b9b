// Configuration analysis: analyzers, each a pure function of the inputs it declares over a
// snapshot of resources (mesh kinds, Namespaces, Services, Pods, Deployments, Secrets' metadata,
// injection webhooks, the mesh config), reporting messages with the reference's codes (MSH…)
// and levels. Used by `meshctl analyze`, `x precheck`, `x revision tag` and the daemon's
// PILOT_ENABLE_ANALYSIS.
export {
  MESSAGE_LEVELS,
  MESSAGE_TYPES,
  analysisMessage,
  atLeast,
  formatMessage,
  isWarningOrWorse,
  messageTypeOfCode,
  originOf,
  sortedDeduped,
  type AnalysisMessage,
  type MessageLevel,
  type MessageTypeName,
  type ResourceKey,
} from './messages.js';
export type { AnalysisContext, Analyzer } from './analyzer.js';
export type { AnalysisInputs, AnalysisSnapshot, InputName, InvalidMark, MeshObject, Resource, SourcePosition } from './snapshot.js';
export { ALL_INPUTS, buildSnapshot, type SnapshotOptions, type SourcedObject } from './build-snapshot.js';
export { runAnalyzers, type AnalysisResult } from './run-analyzers.js';
export { ALL_ANALYZERS } from './all-analyzers.js';
export { alphaAnnotationAnalyzer } from './analyzers/annotation-analyzers.js';
export { webhookOverlaps } from './webhook-overlap.js';
// The daemon's analysis (PILOT_ENABLE_ANALYSIS) and its `/debug/analyze` route.
export { analysisDebugRoutes } from './runner/analysis-debug-routes.js';
export { setupAnalysisWithManager, type AnalysisReport, type AnalysisRunner } from './runner/analysis-runner.js';
