import { compileFullMatchRegex } from './string-matcher.js';

const SEGMENT = "[A-Za-z0-9\\-._~%!$&'()+,;:@=]+";

function escape(value: string): string {
  return value.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/**
 * Compiles an Envoy `uri_template` path template: `*` (or `{name}`, `{name=*}`) is one non-empty
 * segment, `**` (or `{name=**}`) is any rest of the path, allowed last only.
 */
export function compileUriTemplate(template: string): (path: string) => boolean {
  if (!template.startsWith('/')) throw new Error(`path_template "${template}" must start with "/"`);
  const segments = template.slice(1).split('/');
  const parts = segments.map((segment, index) => {
    const variable = /^\{[A-Za-z_][A-Za-z0-9_]*(=(\*\*?))?\}$/.exec(segment);
    const operator = variable ? (variable[2] ?? '*') : segment;
    if (operator === '**') {
      if (index !== segments.length - 1) throw new Error(`path_template "${template}": "**" must be the last segment`);
      return '.*';
    }
    if (operator === '*') return SEGMENT;
    if (segment.includes('*') || segment.includes('{')) throw new Error(`path_template "${template}": bad segment "${segment}"`);
    return escape(segment);
  });
  const regex = compileFullMatchRegex(`/${parts.join('/')}`);
  return (path) => regex.test(path);
}
