import type { z } from 'zod';
import { DURATION_PATTERN } from './duration.js';
import { KIND_NAMES, servedApiVersionsOf, type KindName } from './kinds.js';
import { RESOURCE_SCHEMAS, type TypedResource } from './resource-schemas.js';
import { renderPath, type Path, type PathSegment } from './validation-issue.js';
import { BASE64_PATTERN } from './virtual-service-schema.js';

/** An object of a mesh kind read the way the reference's decoder reads it, whatever its validity. */
export interface ShapedResource {
  /** Every value has its field's type; semantic constraints (ranges, patterns, lengths) may still be broken. */
  readonly resource: TypedResource;
  /** Fields left out: unknown to the kind, `null`, or an enum given by number. */
  readonly omitted: readonly string[];
}

const ZERO_VALUES: Readonly<Record<string, () => unknown>> = {
  string: () => '',
  number: () => 0,
  int: () => 0,
  boolean: () => false,
  array: () => [],
  object: () => ({}),
  record: () => ({}),
};

// The reference decodes YAML with its protobuf JSON decoder, which accepts integers written as strings.
const NUMERIC_STRING = /^-?\d+(\.\d+)?$/;
// Strings the decoder parses into values of their own (durations, bytes): a malformed one fails the object.
const DECODED_FORMATS = new Set([String(DURATION_PATTERN), String(BASE64_PATTERN)]);
// Each pass settles at least one level of nesting; no spec nests deeper than this.
const MAX_PASSES = 32;

type Fix = { readonly path: Path; readonly value?: unknown; readonly omit?: true };

/**
 * The typed form of a mesh-kind object as the reference's snapshot would hold it: fields unknown to
 * the kind, `null`s and enums given by number are left out, integers written as strings are read as
 * numbers, and a required field that is absent reads as its zero value (as an unset protobuf field
 * does). Values that the reference cannot decode at all (a word where a number belongs, an unknown
 * enum name, a malformed duration, a spec that is not an object) leave the whole object out of its snapshot: then
 * `undefined`, as for an object of no mesh kind.
 */
export function shapeForAnalysis(obj: unknown): ShapedResource | undefined {
  if (!isRecord(obj)) return undefined;
  const kind = obj['kind'];
  if (!isKindName(kind) || !servedApiVersionsOf(kind).includes(String(obj['apiVersion']))) return undefined;
  const schema: z.ZodType = RESOURCE_SCHEMAS[kind];
  const value = structuredClone(obj);
  const omitted: string[] = [];
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const parsed = schema.safeParse(value, { reportInput: true });
    if (parsed.success) return { resource: parsed.data as TypedResource, omitted: omitted.sort() };
    const fixes: Fix[] = [];
    for (const issue of parsed.error.issues) {
      const found = fixesFor(issue);
      if (found === 'undecodable') return undefined;
      fixes.push(...found);
    }
    // Only semantic issues left: every value has its type, and the schemas transform nothing.
    if (fixes.length === 0) return { resource: value as TypedResource, omitted: omitted.sort() };
    // Deepest and last first, so that removing a list item does not move the ones still to fix.
    for (const fix of fixes.sort((a, b) => comparePaths(b.path, a.path))) {
      // A top-level field (apiVersion, kind, metadata, spec) cannot stand in for itself; unknown ones go.
      if (fix.path.length < 2 && !fix.omit) return undefined;
      apply(value, fix);
      if (fix.omit) omitted.push(renderPath(fix.path));
    }
  }
  return undefined;
}

function fixesFor(issue: z.core.$ZodIssue): Fix[] | 'undecodable' {
  const path = issue.path.map((segment): PathSegment => (typeof segment === 'number' ? segment : String(segment)));
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ path: [...path, key], omit: true }));
    case 'invalid_type': {
      if (input === null) return [{ path, omit: true }];
      if (input === undefined) {
        const zero = ZERO_VALUES[issue.expected];
        return zero ? [{ path, value: zero() }] : 'undecodable';
      }
      if ((issue.expected === 'number' || issue.expected === 'int') && typeof input === 'string' && NUMERIC_STRING.test(input)) {
        return [{ path, value: Number(input) }];
      }
      return 'undecodable';
    }
    case 'invalid_value':
      return input === null || typeof input === 'number' ? [{ path, omit: true }] : 'undecodable';
    case 'invalid_format':
      return 'pattern' in issue && DECODED_FORMATS.has(String(issue.pattern)) ? 'undecodable' : [];
    case 'invalid_union':
    case 'invalid_key':
    case 'invalid_element':
      return 'undecodable';
    default:
      return [];
  }
}

function apply(root: Record<string, unknown>, fix: Fix): void {
  let parent: unknown = root;
  for (const segment of fix.path.slice(0, -1))
    parent = isRecord(parent) || Array.isArray(parent) ? (parent as Record<PathSegment, unknown>)[segment] : undefined;
  const last = fix.path[fix.path.length - 1];
  if (last === undefined) return;
  if (Array.isArray(parent) && typeof last === 'number') {
    if (fix.omit) parent.splice(last, 1);
    else parent[last] = fix.value;
  } else if (isRecord(parent)) {
    if (fix.omit) delete parent[String(last)];
    else parent[String(last)] = fix.value;
  }
}

function comparePaths(a: Path, b: Path): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as PathSegment;
    const y = b[i] as PathSegment;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return a.length - b.length;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isKindName(value: unknown): value is KindName {
  return typeof value === 'string' && (KIND_NAMES as readonly string[]).includes(value);
}
