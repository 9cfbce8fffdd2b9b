import { FAILSAFE_SCHEMA, load, Type } from 'js-yaml';
import { parse } from 'yaml';

/**
 * The scalars of YAML 1.2's core schema exactly as the `yaml` package resolves them (no
 * timestamps, no `1_000` ints, no merge keys), so that js-yaml reads a rendered template into the
 * very values `yaml` would. One js-yaml type per tag (it keeps only the last type of a tag), each
 * trying its forms in `yaml`'s order.
 */
type ScalarForm = readonly [pattern: RegExp, construct: (text: string) => unknown];

const CORE_SCALARS = [
  scalar('null', '~nN', [/^(?:~|[Nn]ull|NULL)?$/, () => null]),
  scalar('bool', 'tTfF', [/^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (text) => text[0] === 't' || text[0] === 'T']),
  scalar(
    'int',
    '+-0123456789',
    [/^0o[0-7]+$/, (text) => parseInt(text.substring(2), 8)],
    [/^[-+]?[0-9]+$/, (text) => parseInt(text, 10)],
    [/^0x[0-9a-fA-F]+$/, (text) => parseInt(text.substring(2), 16)],
  ),
  scalar(
    'float',
    '+-.0123456789',
    [
      /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
      (text) => (text.slice(-3).toLowerCase() === 'nan' ? NaN : text[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY),
    ],
    [/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, (text) => parseFloat(text)],
    [/^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, (text) => parseFloat(text)],
  ),
];

const SCHEMA = FAILSAFE_SCHEMA.extend({ implicit: CORE_SCALARS });

/**
 * A core scalar type: `first` holds every character its forms can start with (the empty text is
 * null's). js-yaml asks every type about every plain scalar, keys included, and most start with a
 * letter no number or null starts with: turned away on their first character, before any pattern.
 */
function scalar(kind: string, first: string, ...forms: ScalarForm[]): Type {
  const starts = new Set(Array.from(first, (c) => c.charCodeAt(0)));
  const empty = forms.some(([pattern]) => pattern.test(''));
  // Then one alternation turns most of the rest away.
  const any = new RegExp(forms.map(([pattern]) => `(?:${pattern.source})`).join('|'));
  return new Type(`tag:yaml.org,2002:${kind}`, {
    kind: 'scalar',
    resolve: (data: string | null) => {
      const text = data ?? '';
      return text === '' ? empty : starts.has(text.charCodeAt(0)) && any.test(text);
    },
    construct: (data: string | null) => {
      const text = data ?? '';
      return (forms.find(([pattern]) => pattern.test(text)) as ScalarForm)[1](text);
    },
  });
}

/**
 * A rendered injection template as the `yaml` package parses it, read by js-yaml (several times
 * faster on a sidecar-sized document). What js-yaml refuses goes to `yaml`, so that a broken
 * template fails, or an edge of the syntax reads, exactly as it always did.
 */
export function parseRenderedYaml(text: string): unknown {
  try {
    return load(text, { schema: SCHEMA });
  } catch {
    return parse(text);
  }
}
