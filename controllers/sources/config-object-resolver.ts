import { isClusterScoped } from './cluster-scoped-kinds.js';
import type { ConfigFileProblem } from './config-file-problem.js';
import type { ParsedDocument } from './config-file-parser.js';
import { groupKindOf } from './group-kind.js';
import { formatObjectKey, type KubeObject } from '../runtime/index.js';
import { stableJson } from '../stable-json.js';

/** The objects one file currently contributes (its last good set when it is malformed). */
export interface FileObjects {
  path: string;
  documents: readonly ParsedDocument[];
}

/**
 * Normalized objects and their canonical JSON by parsed document, so that a rescan does not redo
 * them for files that did not change. Valid for one `clusterScoped` set only.
 */
export type NormalizedCache = WeakMap<ParsedDocument, { object: KubeObject; content: string }>;

/** An object as the folder defines it, before synthetic metadata is added. */
export interface DesiredObject {
  groupKind: string;
  /** `namespace/name`, or `name` for cluster-scoped kinds. */
  key: string;
  object: KubeObject;
  /** Canonical JSON of `object`: equal text means unchanged content. */
  content: string;
  path: string;
  line: number;
  column: number;
}

export interface ResolvedObjects {
  /** By group-kind, then by key. */
  objects: Map<string, Map<string, DesiredObject>>;
  /** One `conflict` problem for every definition that lost to an earlier one. */
  conflicts: ConfigFileProblem[];
}

/**
 * Merges the files' documents into one set of objects keyed by (group, kind, namespace, name).
 * `files` must be in sorted path order: the first definition of a key wins (an earlier file, or
 * an earlier document of the same file), and each later one is reported as a conflict.
 * Namespaced kinds without `metadata.namespace` get `default`; cluster-scoped kinds get none.
 */
export function resolveConfigObjects(
  files: readonly FileObjects[],
  clusterScoped?: ReadonlySet<string>,
  cache?: NormalizedCache,
): ResolvedObjects {
  const objects = new Map<string, Map<string, DesiredObject>>();
  const conflicts: ConfigFileProblem[] = [];
  for (const file of files) {
    for (const document of file.documents) {
      let normalized = cache?.get(document);
      if (!normalized) {
        const object = normalize(document.object, clusterScoped);
        normalized = { object, content: stableJson(object) };
        cache?.set(document, normalized);
      }
      const { object, content } = normalized;
      const apiVersion = object.apiVersion ?? '';
      const kind = object.kind ?? '';
      const groupKind = groupKindOf(apiVersion, kind);
      const key = formatObjectKey({ namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' });
      let byKey = objects.get(groupKind);
      if (!byKey) objects.set(groupKind, (byKey = new Map()));
      const winner = byKey.get(key);
      if (winner) {
        conflicts.push({
          path: file.path,
          line: document.line,
          column: document.column,
          reason: 'conflict',
          message: `${groupKind} ${key} is already defined in ${winner.path} at line ${winner.line}; this definition is ignored`,
        });
        continue;
      }
      byKey.set(key, { groupKind, key, object, content, path: file.path, line: document.line, column: document.column });
    }
  }
  return { objects, conflicts };
}

function normalize(object: KubeObject, clusterScoped?: ReadonlySet<string>): KubeObject {
  const metadata = { ...object.metadata };
  if (isClusterScoped(object.apiVersion ?? '', object.kind ?? '', clusterScoped)) {
    delete metadata.namespace;
  } else if (typeof metadata.namespace !== 'string' || metadata.namespace === '') {
    metadata.namespace = 'default';
  }
  return { ...object, metadata };
}
