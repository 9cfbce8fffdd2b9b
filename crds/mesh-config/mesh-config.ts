import { readFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Node } from 'yaml';
import type { z } from 'zod';
import { renderPath } from '../validation-issue.js';
import { DEFAULT_MESH_CONFIG } from './mesh-config-defaults.js';
import { parseMeshConfigInput, type MeshConfig, type MeshConfigInput } from './mesh-config-schema.js';
import type { ExtensionProvider } from './extension-provider-schema.js';
import { errorMessage, MeshError, type KubeObject } from '../../runtime/index.js';

/** The key of the mesh config in its ConfigMap (names/ MESH_CONFIG_MAP_NAME, in the root namespace). */
export const MESH_CONFIG_MAP_KEY = 'mesh';

/** The mesh config text of the `mesh` ConfigMap (its `mesh` key), or undefined when it has none. */
export function meshConfigTextOf(configMap: KubeObject | undefined): string | undefined {
  const data = configMap?.['data'];
  if (typeof data !== 'object' || data === null) return undefined;
  const text = (data as Record<string, unknown>)[MESH_CONFIG_MAP_KEY];
  return typeof text === 'string' ? text : undefined;
}

/** The default of `--meshConfig`. */
export const DEFAULT_MESH_CONFIG_FILE = './etc/mesh/config/mesh';

export interface MeshConfigIssue {
  /** `defaultConfig.proxyMetadata`, or empty for the document itself. */
  path: string;
  line: number;
  column: number;
  message: string;
}

/** A mesh config that cannot be used: every issue is located in `origin`. */
export class MeshConfigError extends MeshError<'invalid-mesh-config'> {
  readonly origin: string;
  readonly issues: readonly MeshConfigIssue[];

  constructor(origin: string, issues: readonly MeshConfigIssue[], options?: { cause?: unknown }) {
    const details = issues.map((issue) => `line ${issue.line}, column ${issue.column}: ${issue.path ? `${issue.path}: ` : ''}${issue.message}`);
    super('invalid-mesh-config', `invalid mesh config ${origin}: ${details.join('; ')}`, options);
    this.origin = origin;
    this.issues = issues;
  }
}

/**
 * Parses mesh config YAML (a map of MeshConfig fields; empty text means no fields) and checks it
 * against the schema. `origin` names the file or ConfigMap in errors.
 */
export function parseMeshConfigYaml(text: string, origin: string): MeshConfigInput {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number): { line: number; column: number } => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (document.errors.length > 0) {
    throw new MeshConfigError(
      origin,
      document.errors.map((error) => ({ path: '', ...at(error.pos[0]), message: error.message })),
    );
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new MeshConfigError(origin, [{ path: '', line: 1, column: 1, message: errorMessage(error) }], { cause: error });
  }
  if (value === null || value === undefined) return {};
  const result = parseMeshConfigInput(value);
  if (result.success) return result.data;
  throw new MeshConfigError(
    origin,
    result.error.issues.flatMap((issue) => describeIssue(issue, document.contents, at)),
  );
}

/**
 * Lays `overlay` over `base` as the reference does: top-level fields replace, except
 * `defaultConfig` (merged field by field, `proxyMetadata` key by key), `defaultProviders` (field
 * by field), `extensionProviders` (by name: a provider of the same name is replaced, a new one
 * appended) and `trustDomainAliases` (union, sorted).
 */
export function applyMeshConfig(base: MeshConfig, overlay: MeshConfigInput): MeshConfig {
  const { defaultConfig, defaultProviders, extensionProviders, trustDomainAliases, ...replaced } = structuredClone(overlay);
  const merged: MeshConfig = { ...structuredClone(base), ...stripUndefined(replaced) } as MeshConfig;
  if (defaultConfig) {
    merged.defaultConfig = {
      ...merged.defaultConfig,
      ...stripUndefined(defaultConfig),
      proxyMetadata: { ...merged.defaultConfig.proxyMetadata, ...defaultConfig.proxyMetadata },
    };
  }
  if (defaultProviders) merged.defaultProviders = { ...merged.defaultProviders, ...stripUndefined(defaultProviders) };
  if (extensionProviders) merged.extensionProviders = mergeProviders(merged.extensionProviders, extensionProviders);
  if (trustDomainAliases) merged.trustDomainAliases = [...new Set([...merged.trustDomainAliases, ...trustDomainAliases])].sort();
  // Sections whose fields all default: keep the default where the overlay leaves them out.
  merged.outboundTrafficPolicy = { mode: overlay.outboundTrafficPolicy?.mode ?? base.outboundTrafficPolicy.mode };
  merged.inboundTrafficPolicy = { mode: overlay.inboundTrafficPolicy?.mode ?? base.inboundTrafficPolicy.mode };
  merged.pathNormalization = { normalization: overlay.pathNormalization?.normalization ?? base.pathNormalization.normalization };
  return merged;
}

export interface LoadMeshConfigOptions {
  /** `--meshConfig`; read unless `fileText` is given, and named in errors. An absent file means defaults. */
  file: string;
  /** The standard mesh config text, when it comes from elsewhere (the `mesh` ConfigMap's `mesh` key). */
  fileText?: string;
  /** The shared mesh config (the ConfigMap named by `SHARED_MESH_CONFIG`), merged underneath. */
  sharedText?: string;
  /** Names the shared config in errors. Default `shared mesh config`. */
  sharedOrigin?: string;
}

/** Defaults, then the shared config, then the standard one; throws a `MeshConfigError` when either is invalid. */
export function loadMeshConfig(options: LoadMeshConfigOptions): MeshConfig {
  const fileText = options.fileText ?? readMeshConfigFile(options.file);
  return buildMeshConfig(fileText, options.file, options.sharedText, options.sharedOrigin);
}

/** As `loadMeshConfig`, from text already read (`undefined`: no standard config). */
export function buildMeshConfig(fileText: string | undefined, origin: string, sharedText?: string, sharedOrigin = 'shared mesh config'): MeshConfig {
  let config: MeshConfig = DEFAULT_MESH_CONFIG;
  if (sharedText !== undefined && sharedText.trim() !== '') {
    config = applyMeshConfig(config, parseMeshConfigYaml(sharedText, sharedOrigin));
  }
  if (fileText !== undefined) config = applyMeshConfig(config, parseMeshConfigYaml(fileText, origin));
  return config === DEFAULT_MESH_CONFIG ? structuredClone(DEFAULT_MESH_CONFIG) : config;
}

/** The file's text, or undefined when it does not exist. */
export function readMeshConfigFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw new MeshConfigError(file, [{ path: '', line: 1, column: 1, message: `cannot read: ${errorMessage(error)}` }], {
      cause: error,
    });
  }
}

function mergeProviders(base: readonly ExtensionProvider[], overlay: readonly ExtensionProvider[]): ExtensionProvider[] {
  const merged = [...base];
  for (const provider of overlay) {
    const at = merged.findIndex((existing) => existing.name === provider.name);
    if (at >= 0) merged[at] = provider;
    else merged.push(provider);
  }
  return merged;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** One zod issue as located issues; an unknown-keys issue becomes one per unknown field. */
function describeIssue(issue: z.core.$ZodIssue, root: Node | null, at: (offset: number) => { line: number; column: number }): MeshConfigIssue[] {
  const path = issue.path.filter((segment): segment is string | number => typeof segment !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => {
      const fieldPath = [...path, key];
      return { path: renderPath(fieldPath), ...at(offsetOf(root, fieldPath, true)), message: 'unknown field' };
    });
  }
  return [{ path: renderPath(path), ...at(offsetOf(root, path, false)), message: issue.message }];
}

/** Where the value at `path` starts (or its key, for an unknown field); the nearest parent if it is missing. */
function offsetOf(root: Node | null, path: readonly (string | number)[], wantKey: boolean): number {
  let node: unknown = root;
  let offset = root?.range?.[0] ?? 0;
  for (const [index, segment] of path.entries()) {
    const last = index === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(segment));
      if (!pair) return offset;
      if (last && wantKey && isScalar(pair.key) && pair.key.range) return pair.key.range[0];
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      node = node.items[segment];
    } else {
      return offset;
    }
    const range = (node as { range?: [number, number, number] | null } | undefined)?.range;
    if (range) offset = range[0];
  }
  return offset;
}
