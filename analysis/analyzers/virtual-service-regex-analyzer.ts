import { regexProblem } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';

type StringMatch = { regex?: unknown } | undefined;

/** The regular expressions of one HTTP match, by the field the reference names in its message. */
function regexesOfMatch(match: Record<string, unknown>): { where: string; regex: string }[] {
  const out: { where: string; regex: string }[] = [];
  const add = (where: string, value: unknown): void => {
    const regex = (value as StringMatch)?.regex;
    if (typeof regex === 'string') out.push({ where, regex });
  };
  for (const field of ['uri', 'scheme', 'method', 'authority']) add(field, match[field]);
  for (const field of ['headers', 'queryParams', 'withoutHeaders']) {
    for (const [name, value] of Object.entries((match[field] as Record<string, unknown> | undefined) ?? {})) {
      // In withoutHeaders a regex of "*" means "header present", not a regular expression.
      if (field === 'withoutHeaders' && (value as StringMatch)?.regex === '*') continue;
      add(`${field}[${name}]`, value);
    }
  }
  return out;
}

/**
 * MSH0122: regular expressions the proxy (RE2) refuses, in HTTP matches and CORS origins. Read from
 * the documents as written: a VirtualService with such a regex fails validation and is not typed.
 */
export const regexAnalyzer: Analyzer = {
  name: 'virtualservice.RegexAnalyzer',
  description: 'Checks regex syntax',
  inputs: ['MeshObject'],
  analyze(context) {
    for (const resource of context.read('MeshObject')) {
      if (resource.kind !== 'VirtualService') continue;
      const http = (resource.object['spec'] as { http?: unknown } | undefined)?.http;
      for (const route of Array.isArray(http) ? (http as Record<string, unknown>[]) : []) {
        const found: { where: string; regex: string }[] = [];
        for (const match of Array.isArray(route['match']) ? (route['match'] as Record<string, unknown>[]) : []) found.push(...regexesOfMatch(match ?? {}));
        const origins = (route['corsPolicy'] as { allowOrigins?: unknown } | undefined)?.allowOrigins;
        for (const origin of Array.isArray(origins) ? origins : []) {
          const regex = (origin as StringMatch)?.regex;
          if (typeof regex === 'string') found.push({ where: 'corsPolicy.allowOrigins', regex });
        }
        for (const { where, regex } of found) {
          const problem = regexProblem(regex);
          if (problem !== undefined) context.report('InvalidRegexp', resource, `Field "${where}" regular expression invalid: "${regex}" (${problem})`);
        }
      }
    }
  },
};
