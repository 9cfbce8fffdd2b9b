import { ANALYZE_SUPPRESS_ANNOTATION } from '../names/index.js';
import { UndeclaredInputError, type AnalysisContext, type Analyzer } from './analyzer.js';
import { analysisMessage, originOf, sortedDeduped, type AnalysisMessage } from './messages.js';
import type { AnalysisSnapshot, InputName, Resource } from './snapshot.js';

export interface AnalysisResult {
  /** Sorted as the reference sorts, without duplicates, in-resource suppressions applied. */
  readonly messages: readonly AnalysisMessage[];
  readonly executed: readonly string[];
  /** Analyzers not run because the snapshot does not hold one of their inputs. */
  readonly skipped: readonly string[];
}

/**
 * Runs each analyzer on the inputs it declared. An analyzer that needs an input the snapshot does
 * not hold is skipped; one that throws (or reads an undeclared input) becomes an `InternalError`
 * message naming it, and the others still run.
 */
export function runAnalyzers(snapshot: AnalysisSnapshot, analyzers: readonly Analyzer[]): AnalysisResult {
  const messages: AnalysisMessage[] = [];
  const executed: string[] = [];
  const skipped: string[] = [];
  for (const analyzer of analyzers) {
    if (analyzer.inputs.some((input) => input !== 'MeshConfig' && !snapshot.available.has(input))) {
      skipped.push(analyzer.name);
      continue;
    }
    executed.push(analyzer.name);
    try {
      analyzer.analyze(contextFor(analyzer, snapshot, messages));
    } catch (error) {
      messages.push(analysisMessage('InternalError', 'Cluster', `analyzer ${analyzer.name} failed: ${error instanceof Error ? error.message : String(error)}`));
    }
  }
  return { messages: sortedDeduped(messages), executed: executed.sort(), skipped: skipped.sort() };
}

function contextFor(analyzer: Analyzer, snapshot: AnalysisSnapshot, sink: AnalysisMessage[]): AnalysisContext {
  const declared = new Set<InputName>(analyzer.inputs);
  return {
    domainSuffix: snapshot.domainSuffix,
    rootNamespace: snapshot.rootNamespace,
    read(name) {
      if (!declared.has(name)) throw new UndeclaredInputError(analyzer.name, name);
      return snapshot.inputs[name];
    },
    report(type, resource, message) {
      if (resource === undefined) {
        sink.push(analysisMessage(type, 'Cluster', message));
        return;
      }
      const base = analysisMessage(type, originOf(resource), message);
      if (suppressedInResource(resource, base.code)) return;
      const key = { kind: resource.kind, name: resource.name, namespace: resource.namespace };
      sink.push({ ...base, resource: key, ...(resource.source ? { reference: `${resource.source.file}:${resource.source.line}` } : {}) });
    },
  };
}

function suppressedInResource(resource: Resource<unknown>, code: string): boolean {
  const object = resource.object as { metadata?: { annotations?: Record<string, string> } } | undefined;
  const value = object?.metadata?.annotations?.[ANALYZE_SUPPRESS_ANNOTATION];
  if (value === undefined) return false;
  return value.split(',').some((entry) => entry.trim() === '*' || entry.trim() === code);
}
