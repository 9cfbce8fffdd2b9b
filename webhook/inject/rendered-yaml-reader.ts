import { deepEqual, deepFreeze, isPlainObject } from '../../kube-patch/index.js';
import { parseRenderedYaml } from './rendered-yaml.js';

/**
 * Reads the texts one template renders, reusing what it read before. The renders of one template
 * for two workloads differ in a line or two (the canonical name, a workload name): the same
 * document but for a scalar here and there. A text whose lines all equal those of a text read
 * before (a "skeleton") but for lines that each hold one scalar, in the same place, gets the
 * skeleton's value with those scalars set, instead of a parse of the whole text.
 *
 * Nothing here parses YAML but the library: a line counts as holding one scalar when it ends in a
 * plain word or a JSON-style double-quoted string after `: ` or `- `, and a probe confirms where
 * that scalar lands: the skeleton's text with the line's scalar replaced by a sentinel is parsed,
 * the sentinel must come out as one whole value, and the rest exactly as the skeleton's. Each new
 * scalar is parsed alone by the library, which resolves it as in context (a single-line scalar
 * resolves the same anywhere). A skeleton with aliases (shared values) is never edited.
 *
 * Values are frozen; an edited value shares every part the edit does not touch with its skeleton.
 */
export interface RenderedYamlReader {
  read(text: string): unknown;
}

type Path = readonly (string | number)[];

interface Skeleton {
  readonly lines: readonly string[];
  readonly value: unknown;
  /** False when the value shares parts (aliases): an edit in one place would show in another. */
  readonly editable: boolean;
  /** Where the scalar of a line lands, by line (null: the line holds no scalar of its own), found once. */
  readonly scalarPaths: Map<number, Path | null>;
}

/** Skeletons kept per template (the last ones read in full). */
const SKELETONS = 4;
/** More changed lines than this and the text is parsed whole. */
const MAX_CHANGED_LINES = 8;
const SENTINEL = '\u0001rendered-yaml-probe';
const SENTINEL_TEXT = '"\\u0001rendered-yaml-probe"';

/** A line ending in one scalar: what comes before it (through `: ` or `- `), and the scalar. */
const SCALAR_LINE = /^(.*(?::|-) )("(?:[^"\\\p{Cc}]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"|[A-Za-z0-9_][A-Za-z0-9_./-]*)$/u;

export function newRenderedYamlReader(parse: (text: string) => unknown = parseRenderedYaml): RenderedYamlReader {
  const skeletons: Skeleton[] = [];

  const pathOf = (skeleton: Skeleton, line: number, prefix: string, scalar: string): Path | null => {
    const known = skeleton.scalarPaths.get(line);
    if (known !== undefined) return known;
    const path = probe(skeleton, line, prefix, scalar, parse);
    skeleton.scalarPaths.set(line, path);
    return path;
  };

  const edited = (skeleton: Skeleton, lines: readonly string[]): unknown => {
    const edits: Edit[] = [];
    for (let i = 0; i < lines.length; i++) {
      if (lines[i] === skeleton.lines[i]) continue;
      if (!skeleton.editable || edits.length === MAX_CHANGED_LINES) return undefined;
      const before = SCALAR_LINE.exec(skeleton.lines[i] as string);
      const after = SCALAR_LINE.exec(lines[i] as string);
      if (!before || !after || before[1] !== after[1]) return undefined;
      const path = pathOf(skeleton, i, before[1] as string, before[2] as string);
      if (path === null) return undefined;
      edits.push({ path, value: parse(after[2] as string) });
    }
    return edits.length === 0 ? skeleton.value : applyEdits(skeleton.value, edits);
  };

  return {
    read(text) {
      const lines = text.split('\n');
      for (let s = 0; s < skeletons.length; s++) {
        const skeleton = skeletons[s] as Skeleton;
        if (skeleton.lines.length !== lines.length) continue;
        let value: unknown;
        try {
          value = edited(skeleton, lines);
        } catch {
          // A scalar the library refuses alone: the whole text is parsed, and fails, as always.
          value = undefined;
        }
        if (value === undefined) continue;
        if (s > 0) skeletons.unshift(...skeletons.splice(s, 1));
        return value;
      }
      const value = deepFreeze(parse(text));
      skeletons.unshift({ lines, value, editable: isTree(value), scalarPaths: new Map() });
      if (skeletons.length > SKELETONS) skeletons.pop();
      return value;
    },
  };
}

interface Edit {
  readonly path: Path;
  readonly value: unknown;
}

/** Where the scalar of `line` lands in the skeleton, checked by parsing the skeleton's text with a sentinel there; null when it does not land as one whole value. */
function probe(skeleton: Skeleton, line: number, prefix: string, scalar: string, parse: (text: string) => unknown): Path | null {
  const lines = [...skeleton.lines];
  lines[line] = `${prefix}${SENTINEL_TEXT}`;
  let probed: unknown;
  try {
    probed = parse(lines.join('\n'));
  } catch {
    return null;
  }
  const found: Path[] = [];
  findSentinels(probed, [], found);
  if (found.length !== 1) return null;
  const path = found[0] as Path;
  // The line's own scalar is what the skeleton holds there, and everything else reads as in the
  // skeleton: the sentinel changed that one value only.
  const old = valueAt(skeleton.value, path);
  if (old === undefined || !deepEqual(old, parse(scalar))) return null;
  return deepEqual(applyEdits(probed, [{ path, value: old }]), skeleton.value) ? path : null;
}

function findSentinels(value: unknown, path: (string | number)[], found: Path[]): void {
  if (value === SENTINEL) found.push([...path]);
  if (Array.isArray(value)) value.forEach((child, i) => findSentinels(child, [...path, i], found));
  else if (isPlainObject(value)) for (const [key, child] of Object.entries(value)) findSentinels(child, [...path, key], found);
}

function valueAt(root: unknown, path: Path): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

/** `root` with the values at the edits' paths replaced: the containers on those paths copied (once), the rest shared; frozen. */
function applyEdits(root: unknown, edits: readonly Edit[]): unknown {
  const copies = new Set<object>();
  const own = (value: object): Record<string | number, unknown> => {
    if (copies.has(value)) return value as Record<string | number, unknown>;
    const copy = Array.isArray(value) ? value.slice() : copyObject(value as Record<string, unknown>);
    copies.add(copy);
    return copy as Record<string | number, unknown>;
  };
  let result = root;
  for (const { path, value } of edits) {
    if (path.length === 0) {
      result = value;
      continue;
    }
    result = own(result as object);
    let parent = result as Record<string | number, unknown>;
    for (let i = 0; i < path.length - 1; i++) {
      const key = path[i] as string | number;
      const child = own(parent[key] as object);
      setField(parent, key, child);
      parent = child;
    }
    setField(parent, path[path.length - 1] as string | number, value);
  }
  for (const copy of copies) Object.freeze(copy);
  return result;
}

function copyObject(value: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setField(copy, key, value[key]);
  return copy;
}

/** A YAML `__proto__` key is data: assigning it would set the object's prototype instead. */
function setField(target: Record<string | number, unknown>, key: string | number, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** Whether no object or array appears twice in the value (YAML aliases share one). */
function isTree(value: unknown, seen = new Set<object>()): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (seen.has(value)) return false;
  seen.add(value);
  return Object.values(value).every((child) => isTree(child, seen));
}
