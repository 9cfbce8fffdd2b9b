import type { Runnable } from './runnable.js';

/** Namespace and name of an object; `namespace` is empty for cluster-scoped kinds. */
export interface ObjectKey {
  namespace: string;
  name: string;
}

/** A Kubernetes-shaped object as sources deliver it. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    creationTimestamp?: string | Date;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/**
 * A watcher event (kube-rs style). `apply` is an add or update; `delete` carries the last known
 * object. After a relist the store is replaced at once and each vanished object is deleted once.
 */
export type SourceEvent<T> = { type: 'apply'; object: T } | { type: 'delete'; object: T };

export type SourceHandler<T> = (event: SourceEvent<T>) => void;

/** A read-only, always-current view of one kind, fed by exactly one writer (the source). */
export interface Store<T> {
  get(key: ObjectKey): T | undefined;
  list(): T[];
}

/** A syncing source of one kind: never blocks, exposes a store, notifies subscribers. */
export interface Source<T extends KubeObject = KubeObject> extends Runnable {
  readonly store: Store<T>;
  /** Subscribes to events; returns the unsubscribe function. */
  subscribe(handler: SourceHandler<T>): () => void;
  /** Resolves once the first full list has been stored; rejects if the signal aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  isSynced(): boolean;
}

export function objectKeyOf(object: KubeObject): ObjectKey {
  return { namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' };
}
