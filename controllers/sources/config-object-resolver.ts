import type { ResourceCheck } from '../../crds/index.js';
import { isClusterScoped } from './cluster-scoped-kinds.js';
import type { ConfigFileProblem } from './config-file-problem.js';
import type { ParsedDocument } from './config-file-parser.js';
import { groupKindOf } from './group-kind.js';
import { formatObjectKey } from '../../names/index.js';
import type { KubeObject } from '../../runtime/index.js';
import { stableJson } from '../stable-json.js';
import { withFields } from './with-fields.js';

/** The objects one file currently contributes (its last good set when it is malformed). */
export interface FileObjects {
  path: string;
  /** Each with, for the mesh kinds, its check (`config-file-checker.ts`). */
  documents: readonly (ParsedDocument & { check?: ResourceCheck })[];
}

/** A normalized object and its canonical JSON: equal text means unchanged content. */
export interface NormalizedObject {
  readonly object: KubeObject;
  /** Computed on first read: only a key served before needs it (a first scan compares nothing). */
  readonly content: string;
}

/**
 * Normalized objects by parsed document, so that a rescan does not redo them (nor their content)
 * for files that did not change. Valid for one `clusterScoped` set only.
 */
export type NormalizedCache = WeakMap<ParsedDocument, NormalizedObject>;

/** An object as the folder defines it, before synthetic metadata is added. */
export interface DesiredObject {
  groupKind: string;
  /** `namespace/name`, or `name` for cluster-scoped kinds. */
  key: string;
  /** The same object for the same parsed document, scan after scan. */
  normalized: NormalizedObject;
  /** Its check, for the mesh kinds. */
  check?: ResourceCheck;
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
export function resolveConfigObjects(files: readonly FileObjects[], clusterScoped?: ReadonlySet<string>, cache?: NormalizedCache): ResolvedObjects {
  const objects = new Map<string, Map<string, DesiredObject>>();
  const conflicts: ConfigFileProblem[] = [];
  for (const file of files) {
    for (const document of file.documents) {
      let normalized = cache?.get(document);
      if (!normalized) {
        normalized = newNormalizedObject(normalizeConfigObject(document.object, clusterScoped));
        cache?.set(document, normalized);
      }
      const { object } = normalized;
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
      const desired: DesiredObject = { groupKind, key, normalized, path: file.path, line: document.line, column: document.column };
      if (document.check) desired.check = document.check;
      byKey.set(key, desired);
    }
  }
  return { objects, conflicts };
}

function newNormalizedObject(object: KubeObject): NormalizedObject {
  let content: string | undefined;
  return {
    object,
    get content() {
      return (content ??= stableJson(object));
    },
  };
}

/** The object as the folder serves it: namespaced kinds get `default` when they name none, cluster-scoped ones none. */
export function normalizeConfigObject(object: KubeObject, clusterScoped?: ReadonlySet<string>): KubeObject {
  const given = object.metadata ?? {};
  let metadata: NonNullable<KubeObject['metadata']>;
  if (isClusterScoped(object.apiVersion ?? '', object.kind ?? '', clusterScoped)) {
    metadata = { ...given };
    delete metadata.namespace;
  } else if (typeof given.namespace !== 'string' || given.namespace === '') {
    metadata = withFields(given, { namespace: 'default' });
  } else {
    metadata = { ...given };
  }
  return { ...object, metadata };
}
