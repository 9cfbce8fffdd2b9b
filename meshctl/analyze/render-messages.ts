import { stringify } from 'yaml';
import { formatMessage, type AnalysisMessage } from '../../analysis/index.js';

export type AnalyzeFormat = 'log' | 'json' | 'yaml';
export const ANALYZE_FORMATS: readonly AnalyzeFormat[] = ['log', 'json', 'yaml'];

const COLORS: Readonly<Record<string, string>> = { Error: '\u001b[1;31m', Warning: '\u001b[33m' };
const RESET = '\u001b[0m';

/** Where a code's explanation lives, per minor version, as the reference links them. */
export function documentationUrl(code: string, docsVersion: string): string {
  return `https://mesh.io/${docsVersion}/docs/reference/config/analysis/${code.toLowerCase()}/?ref=meshctl-analyze`;
}

/**
 * The messages in the format asked for: log lines (the level coloured when `color`: Error bold
 * red, Warning yellow), or a JSON or YAML array of `{code, level, origin, reference, message,
 * documentationUrl}`.
 */
export function renderMessages(messages: readonly AnalysisMessage[], format: AnalyzeFormat, options: { color: boolean; docsVersion: string }): string {
  if (format === 'log') {
    return messages
      .map((message) => {
        const line = formatMessage(message);
        const color = options.color ? COLORS[message.level] : undefined;
        return color === undefined ? `${line}\n` : `${color}${message.level}${RESET}${line.slice(message.level.length)}\n`;
      })
      .join('');
  }
  const records = messages.map((m) => ({
    code: m.code,
    level: m.level,
    origin: m.origin,
    reference: m.reference ?? '',
    message: m.message,
    documentationUrl: documentationUrl(m.code, options.docsVersion),
  }));
  return format === 'json' ? `${JSON.stringify(records, null, 2)}\n` : records.length === 0 ? '[]\n' : stringify(records);
}
