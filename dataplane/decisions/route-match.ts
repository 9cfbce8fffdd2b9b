import type { HttpRequestFacts } from './facts.js';
import { compileHeaderMatcher, type HeaderMatcherConfig } from './header-matcher.js';
import { compileFullMatchRegex, compileStringMatcher, type StringMatcherConfig } from './string-matcher.js';

/** `envoy.config.route.v3.RouteMatch`. */
export interface RouteMatchConfig {
  prefix?: string;
  path?: string;
  safe_regex?: { regex: string };
  path_separated_prefix?: string;
  case_sensitive?: boolean | { value: boolean };
  headers?: HeaderMatcherConfig[];
  query_parameters?: { name: string; string_match?: StringMatcherConfig; present_match?: boolean }[];
}

export function splitPath(path: string): { path: string; query: string } {
  const mark = path.indexOf('?');
  return mark < 0 ? { path, query: '' } : { path: path.slice(0, mark), query: path.slice(mark + 1) };
}

function pathPredicate(config: RouteMatchConfig): (path: string) => boolean {
  const caseSensitive = typeof config.case_sensitive === 'object' ? config.case_sensitive.value : config.case_sensitive !== false;
  const fold = (value: string): string => (caseSensitive ? value : value.toLowerCase());
  if (config.prefix !== undefined) {
    const prefix = fold(config.prefix);
    return (path) => fold(path).startsWith(prefix);
  }
  if (config.path !== undefined) {
    const exact = fold(config.path);
    return (path) => fold(path) === exact;
  }
  if (config.path_separated_prefix !== undefined) {
    const prefix = fold(config.path_separated_prefix);
    return (path) => {
      const folded = fold(path);
      return folded === prefix || folded.startsWith(`${prefix}/`);
    };
  }
  if (config.safe_regex !== undefined) {
    const regex = compileFullMatchRegex(config.safe_regex.regex);
    return (path) => regex.test(path);
  }
  throw new Error('route match sets none of prefix, path, path_separated_prefix, safe_regex');
}

/** Compiles a RouteMatch: the path (without the query), every header matcher, every query parameter. */
export function compileRouteMatch(config: RouteMatchConfig): (request: HttpRequestFacts) => boolean {
  const pathMatches = pathPredicate(config);
  const headers = (config.headers ?? []).map((header) => compileHeaderMatcher(header));
  const params = (config.query_parameters ?? []).map((param) => {
    const matcher = param.string_match ? compileStringMatcher(param.string_match) : undefined;
    return (search: URLSearchParams): boolean => {
      const value = search.get(param.name);
      if (value === null) return false;
      return matcher ? matcher(value) : param.present_match !== false;
    };
  });
  return (request) => {
    const { path, query } = splitPath(request.path);
    if (!pathMatches(path)) return false;
    if (!headers.every((matches) => matches(request))) return false;
    if (params.length === 0) return true;
    const search = new URLSearchParams(query);
    return params.every((matches) => matches(search));
  };
}
