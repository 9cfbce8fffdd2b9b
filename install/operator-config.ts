import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { UsageError, errorMessage } from '../runtime/index.js';
import { MESH_OPERATOR_API_VERSION, MESH_OPERATOR_KIND, meshOperatorSchema, type MeshOperator } from './mesh-operator.js';

/** The reference's sysexits code for a usage error (a bad profile, overlay or --set). */
export const EXIT_USAGE = 64;

const usage = (message: string, cause?: unknown): UsageError => new UsageError(message, { exitCode: EXIT_USAGE, ...(cause === undefined ? {} : { cause }) });

type Json = Record<string, unknown>;

/** The profiles shipped in `<manifests>/profiles`, sorted. */
export function listProfiles(manifestsDir: string): string[] {
  const dir = join(manifestsDir, 'profiles');
  if (!existsSync(dir)) throw usage(`no profiles in ${dir}: --manifests must name a folder holding charts/ and profiles/`);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => file.slice(0, -'.yaml'.length))
    .sort();
}

export interface OperatorConfigInputs {
  /** `--manifests`/`-d`: holds `charts/` and `profiles/`. */
  readonly manifestsDir: string;
  /** `-f` overlays, left to right. */
  readonly files: readonly string[];
  /** Overlays already read (a MeshOperator resource the operator reconciles), after the files. */
  readonly documents?: readonly Record<string, unknown>[];
  /** `--set`/`-s` overrides of the spec (`profile=demo`, `values.global.hub=x`, dots escaped with `\\`). */
  readonly sets: readonly string[];
  /** `--revision`/`-r`. */
  readonly revision?: string;
  /** A profile named on the command line (`profile dump <name>`); else `--set profile=`, the files' `spec.profile`, `default`. */
  readonly profile?: string;
  /**
   * `--force`: proceed past validation errors, as the reference does, with a warning for each; the
   * invalid value is left out (its default applies) so that what is rendered is still well formed.
   */
  readonly force?: { readonly warn: (line: string) => void };
}

/**
 * The installation as the reference builds it: the `default` profile, the chosen profile over it,
 * the `-f` overlays left to right, then `--set`; validated against the install schema (unknown
 * keys refused, named).
 */
export function buildOperatorConfig(inputs: OperatorConfigInputs): MeshOperator {
  const overlays = [...inputs.files.map((file) => readOverlay(file)), ...(inputs.documents ?? [])];
  const sets = inputs.sets.map(parseSet);
  const chosen = inputs.profile ?? (sets.find((set) => set.path.join('.') === 'profile')?.value as string | undefined) ?? lastProfileOf(overlays) ?? 'default';
  const profiles = listProfiles(inputs.manifestsDir);
  if (!profiles.includes(chosen)) throw usage(`unknown profile "${chosen}": have ${profiles.join(', ')}`);
  let merged: Json = readProfile(inputs.manifestsDir, 'default');
  if (chosen !== 'default') merged = mergeOverlay(merged, readProfile(inputs.manifestsDir, chosen));
  for (const overlay of overlays) merged = mergeOverlay(merged, overlay);
  const spec: Json = { ...((merged['spec'] as Json | undefined) ?? {}), profile: chosen };
  for (const set of sets) setPath(spec, set.path, set.value);
  if (inputs.revision !== undefined && inputs.revision !== '') spec['revision'] = inputs.revision;
  const document = { apiVersion: MESH_OPERATOR_API_VERSION, kind: MESH_OPERATOR_KIND, ...(merged['metadata'] ? { metadata: merged['metadata'] } : {}), spec };
  let parsed = meshOperatorSchema.safeParse(document);
  // Each pass leaves out what the last one refused; nesting bounds the passes needed.
  for (let pass = 0; !parsed.success && inputs.force !== undefined && pass < 8; pass++) {
    for (const issue of parsed.error.issues) {
      inputs.force.warn(`spec invalid; continuing because of --force: ${issue.path.join('.')}: ${issue.message}`);
      leaveOut(document, issue.path, issue.code === 'unrecognized_keys' ? issue.keys : undefined);
    }
    parsed = meshOperatorSchema.safeParse(document);
  }
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw usage(`the install configuration is invalid: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** Removes the value at `path` (or, for unknown keys, those keys under it) from `document`. */
function leaveOut(document: Json, path: readonly PropertyKey[], keys: readonly string[] | undefined): void {
  const names = keys ? [...path, ''] : path;
  if (names.length === 0) return;
  let parent: unknown = document;
  for (const name of names.slice(0, -1)) parent = (parent as Record<PropertyKey, unknown> | undefined)?.[name];
  if (parent === null || typeof parent !== 'object') return;
  const container = parent as Record<PropertyKey, unknown>;
  for (const key of keys ?? [names[names.length - 1] as PropertyKey]) {
    if (Array.isArray(container) && typeof key === 'number') container.splice(key, 1);
    else delete container[key];
  }
}

function readProfile(manifestsDir: string, name: string): Json {
  return readYamlObject(join(manifestsDir, 'profiles', `${name}.yaml`), `profile ${name}`);
}

function readOverlay(file: string): Json {
  return readYamlObject(file, `-f ${file}`);
}

function readYamlObject(file: string, what: string): Json {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw usage(`${what}: cannot read ${file}: ${errorMessage(error)}`, error);
  }
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw usage(`${what}: not YAML: ${errorMessage(error)}`, error);
  }
  if (value === null || value === undefined) return {};
  if (!isObject(value)) throw usage(`${what}: expected a MeshOperator document (apiVersion ${MESH_OPERATOR_API_VERSION}, kind ${MESH_OPERATOR_KIND})`);
  if (value['kind'] !== undefined && value['kind'] !== MESH_OPERATOR_KIND)
    throw usage(`${what}: expected kind ${MESH_OPERATOR_KIND}, got ${JSON.stringify(value['kind'])}`);
  return value;
}

function lastProfileOf(overlays: readonly Json[]): string | undefined {
  let profile: string | undefined;
  for (const overlay of overlays) {
    const spec = overlay['spec'];
    if (isObject(spec) && typeof spec['profile'] === 'string') profile = spec['profile'];
  }
  return profile;
}

/** Maps merge key by key; gateway lists merge by `name`; other lists are replaced. */
export function mergeOverlay(base: Json, overlay: Json): Json {
  const result: Json = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const current = result[key];
    if (isObject(current) && isObject(value)) result[key] = mergeOverlay(current, value);
    else if ((key === 'ingressGateways' || key === 'egressGateways') && Array.isArray(current) && Array.isArray(value))
      result[key] = mergeByName(current, value);
    else result[key] = value;
  }
  return result;
}

function mergeByName(base: readonly unknown[], overlay: readonly unknown[]): unknown[] {
  const result = [...base];
  for (const item of overlay) {
    const index = result.findIndex((existing) => isObject(existing) && isObject(item) && existing['name'] === item['name']);
    if (index >= 0 && isObject(item)) result[index] = mergeOverlay(result[index] as Json, item);
    else result.push(item);
  }
  return result;
}

/** `a.b\\.c[0].d=value`: the path (escaped dots kept, `[n]` an index) and the value (booleans and numbers typed). */
export function parseSet(text: string): { path: (string | number)[]; value: unknown } {
  const at = text.indexOf('=');
  if (at <= 0) throw usage(`--set ${JSON.stringify(text)}: expected path=value`);
  const path: (string | number)[] = [];
  for (const part of text.slice(0, at).split(/(?<!\\)\./)) {
    const match = /^(.*?)((?:\[\d+\])*)$/.exec(part.replaceAll('\\.', '.'));
    const [, name = '', indexes = ''] = match ?? [];
    if (name !== '') path.push(name);
    for (const index of indexes.matchAll(/\[(\d+)\]/g)) path.push(Number(index[1]));
  }
  const raw = text.slice(at + 1);
  const value = raw === 'true' ? true : raw === 'false' ? false : /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  return { path, value };
}

function setPath(target: Json, path: readonly (string | number)[], value: unknown): void {
  let node: Record<string | number, unknown> = target;
  path.forEach((key, i) => {
    if (i === path.length - 1) {
      node[key] = value;
      return;
    }
    const next = node[key];
    if (typeof next === 'object' && next !== null) node = next as Record<string | number, unknown>;
    else {
      const created = typeof path[i + 1] === 'number' ? [] : {};
      node[key] = created;
      node = created as Record<string | number, unknown>;
    }
  });
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
