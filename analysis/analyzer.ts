import type { MessageTypeName } from './messages.js';
import type { AnalysisInputs, InputName, Resource } from './snapshot.js';

/** What an analyzer sees: only the inputs it declared, and a way to report. */
export interface AnalysisContext {
  /** The declared input `name`; reading an undeclared one throws `UndeclaredInputError`. */
  read<N extends InputName>(name: N): AnalysisInputs[N];
  readonly domainSuffix: string;
  readonly rootNamespace: string;
  /** Reports a message about `resource`; `path` (a field path) is appended to the reference's position when known. */
  report(type: MessageTypeName, resource: Resource<unknown> | undefined, message: string): void;
}

/** One analyzer: a pure function of its declared inputs. Names follow the reference's `<area>.<Name>`. */
export interface Analyzer {
  readonly name: string;
  readonly description: string;
  readonly inputs: readonly InputName[];
  analyze(context: AnalysisContext): void;
}

export class UndeclaredInputError extends Error {
  constructor(analyzer: string, input: string) {
    super(`analyzer ${analyzer} read input ${input} that it did not declare`);
    this.name = 'UndeclaredInputError';
  }
}
