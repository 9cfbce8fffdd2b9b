import { messageTypeOfCode, type AnalysisMessage } from '../../analysis/index.js';
import { UsageError } from '../../runtime/index.js';

export interface Suppression {
  readonly code: string;
  readonly resource: RegExp;
}

/**
 * Parses `-S <code>=<Kind> <name>.<namespace>` values (`*` matches anything in the resource part).
 * A malformed value is a usage error with the reference's words; an unknown code only a warning.
 */
export function parseSuppressions(values: readonly string[], warn: (line: string) => void): Suppression[] {
  return values.map((value) => {
    const at = value.indexOf('=');
    const code = at > 0 ? value.slice(0, at).trim() : '';
    const resource = at > 0 ? value.slice(at + 1).trim() : '';
    if (code === '' || resource === '' || !resource.includes(' ')) {
      throw new UsageError(`${JSON.stringify(value)} is not a valid suppression value. See meshctl analyze --help`, { exitCode: 64 });
    }
    if (messageTypeOfCode(code) === undefined) warn(`Warning: Supplied message code '${code}' is an unknown message code and will not have any effect.`);
    return { code, resource: new RegExp(`^${resource.split('*').map(escapeRegExp).join('.*')}$`) };
  });
}

export function isSuppressed(message: AnalysisMessage, suppressions: readonly Suppression[]): boolean {
  return suppressions.some((s) => s.code === message.code && s.resource.test(message.origin));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
