import { regexProblem, type HttpMatchRequest } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';

type StringMatch = { readonly regex?: string | undefined } | undefined;

/** The regular expressions of one HTTP match, by the field the reference names in its message. */
function regexesOfMatch(match: HttpMatchRequest): { where: string; regex: string }[] {
  const out: { where: string; regex: string }[] = [];
  const add = (where: string, value: StringMatch): void => {
    if (value?.regex !== undefined) out.push({ where, regex: value.regex });
  };
  for (const field of ['uri', 'scheme', 'method', 'authority'] as const) add(field, match[field]);
  for (const field of ['headers', 'queryParams', 'withoutHeaders'] as const) {
    for (const [name, value] of Object.entries(match[field] ?? {})) {
      // In withoutHeaders a regex of "*" means "header present", not a regular expression.
      if (field === 'withoutHeaders' && value.regex === '*') continue;
      add(`${field}[${name}]`, value);
    }
  }
  return out;
}

/**
 * MSH0122: regular expressions the proxy (RE2) refuses, in HTTP matches and CORS origins. Such a
 * VirtualService also fails validation (MSH0106); it is typed all the same, as the reference's is.
 */
export const regexAnalyzer: Analyzer = {
  name: 'virtualservice.RegexAnalyzer',
  description: 'Checks regex syntax',
  inputs: ['VirtualService'],
  analyze(context) {
    for (const resource of context.read('VirtualService')) {
      for (const route of resource.object.spec.http ?? []) {
        const found = (route.match ?? []).flatMap(regexesOfMatch);
        for (const origin of route.corsPolicy?.allowOrigins ?? []) {
          if (origin.regex !== undefined) found.push({ where: 'corsPolicy.allowOrigins', regex: origin.regex });
        }
        for (const { where, regex } of found) {
          const problem = regexProblem(regex);
          if (problem !== undefined) context.report('InvalidRegexp', resource, `Field "${where}" regular expression invalid: "${regex}" (${problem})`);
        }
      }
    }
  },
};
