import { createHash } from 'node:crypto';
import type { ResourceCheck } from '../../crds/index.js';
import { withServedMetadata } from './config-file-checker.js';
import type { DesiredObject, NormalizedObject } from './config-object-resolver.js';
import { withFields } from './with-fields.js';
import { formatObjectKey } from '../../names/index.js';
import { type Clock, type KubeObject, type ObjectKey, type SourceEvent } from '../../runtime/index.js';

/**
 * The objects the folder serves, by group-kind and key, with the metadata an API server would
 * add: `resourceVersion` (a counter shared by all kinds, bumped when an object's content changes),
 * `generation` (1, then +1 per content change), `uid` (derived from the key, so stable per key,
 * even across restarts) and `creationTimestamp` (when the key was first seen; a key that vanishes
 * and comes back is a new object).
 */
export interface ConfigObjectIndex {
  get(groupKind: string, key: ObjectKey): KubeObject | undefined;
  list(groupKind: string): KubeObject[];
  /**
   * Swaps in the full desired set at once and returns the events per group-kind: `apply` for a
   * new object or a content change, one `delete` (with the last served copy) for each object gone,
   * nothing for unchanged ones.
   */
  replace(desired: ReadonlyMap<string, ReadonlyMap<string, DesiredObject>>): Map<string, SourceEvent<KubeObject>[]>;
  /** The check of a served mesh-kind object (as `checkResource` gives it for that object), when it was checked before serving. */
  checkOf(object: KubeObject): ResourceCheck | undefined;
}

interface Served {
  object: KubeObject;
  /** What it was built from: the same one means the same content. */
  normalized: NormalizedObject;
}

export function newConfigObjectIndex(clock: Clock): ConfigObjectIndex {
  let served = new Map<string, Map<string, Served>>();
  let lastVersion = 0;
  const checks = new WeakMap<KubeObject, ResourceCheck>();
  let lastTimestamp = { second: NaN, text: '' };
  /** RFC 3339 in whole seconds, as the API server writes it (a load stamps thousands of objects in the same second). */
  const timestamp = (ms: number): string => {
    const second = Math.floor(ms / 1000);
    if (second !== lastTimestamp.second) lastTimestamp = { second, text: new Date(second * 1000).toISOString().replace('.000Z', 'Z') };
    return lastTimestamp.text;
  };

  const build = (desired: DesiredObject, previous: Served | undefined): Served => {
    const metadata = desired.normalized.object.metadata ?? {};
    const generation = typeof previous?.object.metadata?.generation === 'number' ? previous.object.metadata.generation + 1 : 1;
    const object: KubeObject = {
      ...desired.normalized.object,
      metadata: withFields(metadata, {
        uid: uidOf(desired.groupKind, desired.key),
        resourceVersion: String(++lastVersion),
        generation,
        creationTimestamp: previous?.object.metadata?.creationTimestamp ?? timestamp(clock.now()),
      }),
    };
    if (desired.check) checks.set(object, desired.check);
    return { object, normalized: desired.normalized };
  };

  return {
    get(groupKind, key) {
      return served.get(groupKind)?.get(formatObjectKey(key))?.object;
    },

    list(groupKind) {
      return [...(served.get(groupKind)?.values() ?? [])].map((entry) => entry.object);
    },

    replace(desired) {
      const next = new Map<string, Map<string, Served>>();
      const events = new Map<string, SourceEvent<KubeObject>[]>();
      const push = (groupKind: string, event: SourceEvent<KubeObject>): void => {
        const list = events.get(groupKind);
        if (list) list.push(event);
        else events.set(groupKind, [event]);
      };
      for (const [groupKind, byKey] of desired) {
        const before = served.get(groupKind);
        const after = new Map<string, Served>();
        for (const [key, wanted] of byKey) {
          const previous = before?.get(key);
          if (previous && (previous.normalized === wanted.normalized || previous.normalized.content === wanted.normalized.content)) {
            after.set(key, previous);
            continue;
          }
          const entry = build(wanted, previous);
          after.set(key, entry);
          push(groupKind, { type: 'apply', object: entry.object });
        }
        if (after.size > 0) next.set(groupKind, after);
      }
      for (const [groupKind, before] of served) {
        const after = next.get(groupKind);
        for (const [key, entry] of before) {
          if (!after?.has(key)) push(groupKind, { type: 'delete', object: entry.object });
        }
      }
      served = next;
      return events;
    },

    checkOf(object) {
      const check = checks.get(object);
      return check && withServedMetadata(check, object);
    },
  };
}

/** A UUID-shaped digest of the key (RFC 4122 name-based layout). */
function uidOf(groupKind: string, key: string): string {
  const hex = createHash('sha1').update(`${groupKind}/${key}`).digest('hex');
  const variant = ((parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}
