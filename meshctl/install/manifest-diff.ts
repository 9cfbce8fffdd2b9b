import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { parse, stringify } from 'yaml';
import { UsageError, errorMessage } from '../../runtime/index.js';
import { EXIT_USAGE, objectKey, objectsOfManifest } from '../../install/index.js';

export interface ManifestDiffOptions {
  /** `--select`: `Kind:Namespace:Name` items, comma separated, `*` or empty a wildcard; default `::` (everything). */
  readonly select: string;
  /** `--ignore`: as `--select`, with an optional fourth part, a path inside the object to ignore (`Deployment:*:meshd:spec.replicas`). */
  readonly ignore: string;
  /** `--rename`: `A->B` pairs, comma separated, renaming objects of the first manifest before comparing. */
  readonly rename: string;
  /** `--verbose`: a line diff of each differing object instead of the changed paths. */
  readonly verbose: boolean;
}

type Json = unknown;

/** The manifests of a file, or with `-r` of every `.yaml` file under a folder, as one text. */
export function readManifests(path: string, directory: boolean): string {
  try {
    if (!directory) return readFileSync(path, 'utf8');
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir).sort()) {
        const full = join(dir, entry);
        if (statSync(full).isDirectory()) walk(full);
        else if (entry.endsWith('.yaml')) files.push(full);
      }
    };
    walk(path);
    return files.map((file) => `${readFileSync(file, 'utf8')}\n---\n`).join('');
  } catch (error) {
    throw new UsageError(`could not read ${JSON.stringify(path)}: ${errorMessage(error)}`, { exitCode: EXIT_USAGE, cause: error });
  }
}

/**
 * `meshctl manifest diff`: objects matched by `Kind:Namespace:Name`, each reported missing on one
 * side or with its changed paths (`old -> new`, as the reference prints them); empty when equal.
 */
export function diffManifests(a: string, b: string, options: ManifestDiffOptions): string {
  const select = patterns(options.select);
  const ignore = patterns(options.ignore);
  const renames = options.rename
    .split(',')
    .filter((pair) => pair.includes('->'))
    .map((pair) => pair.split('->').map((part) => part.trim()) as [string, string]);
  const left = keyed(a, '--first manifest', renames);
  const right = keyed(b, '--second manifest', []);
  const kept = (key: string): boolean => select.some((p) => p.matches(key)) && !ignore.some((p) => p.matches(key) && p.path === undefined);
  const out = new Map<string, string>();
  for (const [key, object] of left) {
    if (!kept(key)) continue;
    const other = right.get(key);
    if (other === undefined) {
      out.set(key, `\n\nObject ${key} is missing in B:\n\n`);
      continue;
    }
    const ignoredPaths = ignore.filter((p) => p.path !== undefined && p.matches(key)).map((p) => p.path as string);
    const diff = options.verbose ? lineDiff(object, other) : pathDiff(comparable(object), comparable(other), ignoredPaths);
    if (diff !== '') out.set(key, `\n\nObject ${key} has diffs:\n\n${diff}`);
  }
  for (const key of right.keys()) if (kept(key) && !left.has(key)) out.set(key, `\n\nObject ${key} is missing in A:\n\n`);
  return [...out.keys()]
    .sort()
    .map((key) => out.get(key))
    .join('');
}

function keyed(manifest: string, what: string, renames: readonly [string, string][]): Map<string, Json> {
  let objects;
  try {
    objects = objectsOfManifest(manifest);
  } catch (error) {
    throw new UsageError(`${what}: not YAML: ${errorMessage(error)}`, { exitCode: EXIT_USAGE, cause: error });
  }
  const result = new Map<string, Json>();
  for (const object of objects) {
    let key = objectKey(object);
    for (const [from, to] of renames) {
      if (!pattern(from).matches(key)) continue;
      const parts = key.split(':');
      key = to
        .split(':')
        .map((part, i) => (part === '' || part === '*' ? (parts[i] ?? '') : part))
        .join(':');
    }
    result.set(key, object);
  }
  return result;
}

interface Pattern {
  matches(key: string): boolean;
  readonly path?: string;
}

function patterns(list: string): Pattern[] {
  return list
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map(pattern);
}

/** `Kind:Namespace:Name[:path]`, each part a glob (`*` any run), an empty part anything. */
function pattern(item: string): Pattern {
  const [kind = '', namespace = '', name = '', path] = item.split(':');
  const part = (glob: string): string => (glob === '' || glob === '*' ? '[^:]*' : glob.split('*').map(escapeRegExp).join('[^:]*'));
  const regexp = new RegExp(`^${part(kind)}:${part(namespace)}:${part(name)}$`);
  return { matches: (key) => regexp.test(key), ...(path !== undefined && path !== '' ? { path } : {}) };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A ConfigMap's data values that are YAML compare as YAML, as the reference does (mesh config, injector config). */
function comparable(object: Json): Json {
  const record = object as { kind?: string; data?: Record<string, unknown> };
  if (record.kind !== 'ConfigMap' || !record.data) return object;
  const data = Object.fromEntries(
    Object.entries(record.data).map(([key, value]) => {
      if (typeof value !== 'string') return [key, value];
      try {
        const parsed: unknown = parse(value);
        return [key, typeof parsed === 'object' && parsed !== null ? parsed : value];
      } catch {
        return [key, value];
      }
    }),
  );
  return { ...record, data };
}

/** The changed paths as a YAML tree whose leaves read `old -> new`, `old ->` or `-> new`. */
function pathDiff(a: Json, b: Json, ignoredPaths: readonly string[]): string {
  const tree: Record<string, unknown> = {};
  const ignored = ignoredPaths.map((glob) => new RegExp(`^${glob.split('*').map(escapeRegExp).join('.*')}$`));
  const write = (path: readonly string[], leaf: string): void => {
    if (ignored.some((re) => re.test(path.join('.')))) return;
    let node = tree;
    path.forEach((step, i) => {
      if (i === path.length - 1) node[step] = leaf;
      else node = (node[step] ??= {}) as Record<string, unknown>;
    });
  };
  const walk = (x: Json, y: Json, path: string[]): void => {
    if (ignored.some((re) => re.test(path.join('.')))) return;
    if (isObject(x) && isObject(y)) {
      for (const key of new Set([...Object.keys(x), ...Object.keys(y)])) walk(x[key], y[key], [...path, key]);
      return;
    }
    if (Array.isArray(x) && Array.isArray(y)) {
      for (let i = 0; i < Math.max(x.length, y.length); i++) walk(x[i], y[i], [...path, `[#${i}]`]);
      return;
    }
    if (JSON.stringify(x) === JSON.stringify(y)) return;
    const [hasX, hasY] = [nonEmpty(x), nonEmpty(y)];
    if (!hasX && !hasY) return;
    write(path, hasX && hasY ? `${show(x)} -> ${show(y)}` : hasX ? `${show(x)} ->` : `-> ${show(y)}`);
  };
  walk(a, b, []);
  return Object.keys(tree).length === 0 ? '' : stringify(tree, { sortMapEntries: true, lineWidth: 0 });
}

function lineDiff(a: Json, b: Json): string {
  const [before, after] = [stringify(a, { lineWidth: 0 }), stringify(b, { lineWidth: 0 })];
  if (before === after) return '';
  const lines = createTwoFilesPatch('A', 'B', before, after, '', '', { context: 3 }).split('\n');
  return lines.slice(lines.findIndex((line) => line.startsWith('@@'))).join('\n');
}

function nonEmpty(value: Json): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string' || Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return true;
}

function show(value: Json): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function isObject(value: Json): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
