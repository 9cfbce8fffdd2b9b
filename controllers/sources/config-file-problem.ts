/**
 * Why a config file (or one document of it) is not served as written:
 * - `syntax`: the file is not YAML/JSON; its last good objects keep serving.
 * - `document`: one document is not an object with apiVersion, kind and metadata.name; only it is dropped.
 * - `conflict`: the document's key is already defined earlier (sorted path, then document order).
 * - `read`: the file or folder cannot be read; its last good objects keep serving.
 */
export type ConfigFileProblemReason = 'syntax' | 'document' | 'conflict' | 'read';

/** One problem, located for a human: 1-based line and column (1:1 when there is no better place). */
export interface ConfigFileProblem {
  path: string;
  line: number;
  column: number;
  reason: ConfigFileProblemReason;
  message: string;
}

export function formatConfigFileProblem(problem: ConfigFileProblem): string {
  return `${problem.path}:${problem.line}:${problem.column}: ${problem.message}`;
}
