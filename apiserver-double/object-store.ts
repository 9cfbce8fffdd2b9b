import { MeshError, type KubeObject } from '../runtime/index.js';

export type StoredEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One write, as the watch history keeps it. */
export interface StoredEvent {
  revision: number;
  type: StoredEventType;
  /** Storage key of the kind (`group/plural`). */
  resource: string;
  object: KubeObject;
  /** The object before this write (absent for ADDED). */
  previous?: KubeObject;
}

export type StoreListener = (event: StoredEvent) => void;

/** Asked for a revision the history no longer covers. */
export class RevisionCompactedError extends MeshError<'revision-compacted'> {
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super('revision-compacted', `too old resource version: ${requested} (${oldest})`);
  }
}

/** Asked for a revision not reached yet. */
export class RevisionTooLargeError extends MeshError<'revision-too-large'> {
  constructor(
    readonly requested: number,
    readonly current: number,
  ) {
    super('revision-too-large', `Too large resource version: ${requested}, current: ${current}`);
  }
}

/**
 * The objects of every kind, with one global revision counter like etcd, a bounded history of
 * writes for watches and consistent paginated lists, and synchronous listeners.
 */
export class ObjectStore {
  private revision = 0;
  /** Every event at or below this revision has been forgotten. */
  private compacted = 0;
  private readonly buckets = new Map<string, Map<string, KubeObject>>();
  private history: StoredEvent[] = [];
  private readonly listeners = new Map<string, Set<StoreListener>>();

  constructor(private readonly historyLimit: number) {}

  currentRevision(): number {
    return this.revision;
  }

  /** The oldest revision a watch may start from. */
  oldestWatchableRevision(): number {
    return this.compacted;
  }

  get(resource: string, namespace: string, name: string): KubeObject | undefined {
    return this.buckets.get(resource)?.get(objectKey(namespace, name));
  }

  /** Current objects, sorted by namespace then name; pass a namespace to narrow. */
  list(resource: string, namespace?: string): KubeObject[] {
    const bucket = this.buckets.get(resource);
    if (!bucket) return [];
    return sortObjects([...bucket.values()].filter((o) => namespace === undefined || (o.metadata?.namespace ?? '') === namespace));
  }

  /** The objects as they were at `revision`, rebuilt from the history. */
  listAt(resource: string, revision: number, namespace?: string): KubeObject[] {
    if (revision > this.revision) throw new RevisionTooLargeError(revision, this.revision);
    if (revision < this.compacted) throw new RevisionCompactedError(revision, this.compacted);
    const state = new Map(this.buckets.get(resource) ?? []);
    for (let i = this.history.length - 1; i >= 0; i--) {
      const event = this.history[i] as StoredEvent;
      if (event.revision <= revision) break;
      if (event.resource !== resource) continue;
      const key = keyOf(event.object);
      if (event.type === 'ADDED' || !event.previous) state.delete(key);
      else state.set(key, event.previous);
    }
    return sortObjects([...state.values()].filter((o) => namespace === undefined || (o.metadata?.namespace ?? '') === namespace));
  }

  /** Stores `object` under a new revision (written into its metadata) and notifies listeners. */
  put(resource: string, object: KubeObject): KubeObject {
    const bucket = this.bucket(resource);
    const key = keyOf(object);
    const previous = bucket.get(key);
    const revision = ++this.revision;
    const stored = withRevision(object, revision);
    bucket.set(key, stored);
    this.record({ revision, type: previous ? 'MODIFIED' : 'ADDED', resource, object: stored, ...(previous ? { previous } : {}) });
    return stored;
  }

  /**
   * Deletes an object under a new revision; the DELETED event carries that revision and the
   * object's last state (`finalState`, when the deleting write also changed it).
   */
  remove(resource: string, namespace: string, name: string, finalState?: KubeObject): KubeObject | undefined {
    const bucket = this.buckets.get(resource);
    const key = objectKey(namespace, name);
    const previous = bucket?.get(key);
    if (!bucket || !previous) return undefined;
    bucket.delete(key);
    const revision = ++this.revision;
    const deleted = withRevision(finalState ?? previous, revision);
    this.record({ revision, type: 'DELETED', resource, object: deleted, previous });
    return deleted;
  }

  /** Events of one kind after `revision`, oldest first. */
  eventsAfter(resource: string, revision: number): StoredEvent[] {
    if (revision < this.compacted) throw new RevisionCompactedError(revision, this.compacted);
    return this.history.filter((e) => e.revision > revision && e.resource === resource);
  }

  /** Listens to every write of one kind; returns the unsubscribe function. */
  subscribe(resource: string, listener: StoreListener): () => void {
    const set = this.listeners.get(resource) ?? new Set<StoreListener>();
    set.add(listener);
    this.listeners.set(resource, set);
    return () => set.delete(listener);
  }

  /** Forgets the whole history, as etcd compaction does. */
  compact(): void {
    this.history = [];
    this.compacted = this.revision;
  }

  private bucket(resource: string): Map<string, KubeObject> {
    let bucket = this.buckets.get(resource);
    if (!bucket) {
      bucket = new Map();
      this.buckets.set(resource, bucket);
    }
    return bucket;
  }

  private record(event: StoredEvent): void {
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compacted = (dropped[dropped.length - 1] as StoredEvent).revision;
    }
    for (const listener of [...(this.listeners.get(event.resource) ?? [])]) listener(event);
  }
}

export function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function keyOf(object: KubeObject): string {
  return objectKey(object.metadata?.namespace ?? '', object.metadata?.name ?? '');
}

function withRevision(object: KubeObject, revision: number): KubeObject {
  return { ...object, metadata: { ...object.metadata, resourceVersion: String(revision) } };
}

function sortObjects(objects: KubeObject[]): KubeObject[] {
  return objects.sort((a, b) => {
    const ka = keyOf(a);
    const kb = keyOf(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}
