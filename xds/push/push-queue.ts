/**
 * The per-connection push queue of the reference (pilot/pkg/xds/pushqueue.go): at most one
 * pending entry per connection; a push for a connection already pending is merged into it,
 * and one for a connection being pushed right now is kept aside and re-queued by `markDone`.
 */
export interface PushQueue<K, T> {
  enqueue(key: K, item: T): void;
  /** The next connection and its merged item; resolves undefined once the queue is shut down. */
  dequeue(): Promise<[K, T] | undefined>;
  /** Ends the processing of `key`; a push that arrived meanwhile is queued again. */
  markDone(key: K): void;
  /** Forgets a connection (closed): its pending entry is dropped. */
  remove(key: K): void;
  /** Connections waiting (not counting those in progress). */
  pending(): number;
  shutDown(): void;
}

export function newPushQueue<K, T>(merge: (older: T, newer: T) => T): PushQueue<K, T> {
  const order: K[] = [];
  let head = 0;
  const pendingItems = new Map<K, T>();
  /** In progress; the value is a push that arrived meanwhile. */
  const processing = new Map<K, T | undefined>();
  const waiters: Array<(entry: [K, T] | undefined) => void> = [];
  let shutDown = false;

  const take = (): [K, T] | undefined => {
    while (head < order.length) {
      const key = order[head++] as K;
      if (head > 1024 && head * 2 > order.length) {
        order.splice(0, head);
        head = 0;
      }
      const item = pendingItems.get(key);
      if (item === undefined) continue; // removed while waiting
      pendingItems.delete(key);
      processing.set(key, undefined);
      return [key, item];
    }
    return undefined;
  };

  const offer = (key: K, item: T): void => {
    pendingItems.set(key, item);
    order.push(key);
    const waiter = waiters.shift();
    if (waiter) waiter(take());
  };

  return {
    enqueue(key, item) {
      if (shutDown) return;
      if (processing.has(key)) {
        const aside = processing.get(key);
        processing.set(key, aside === undefined ? item : merge(aside, item));
        return;
      }
      const existing = pendingItems.get(key);
      if (existing !== undefined) {
        pendingItems.set(key, merge(existing, item));
        return;
      }
      offer(key, item);
    },
    dequeue() {
      if (shutDown) return Promise.resolve(undefined);
      const entry = take();
      if (entry) return Promise.resolve(entry);
      return new Promise((resolve) => waiters.push(resolve));
    },
    markDone(key) {
      const aside = processing.get(key);
      processing.delete(key);
      if (aside !== undefined && !shutDown) offer(key, aside);
    },
    remove(key) {
      pendingItems.delete(key);
      processing.delete(key);
    },
    pending: () => pendingItems.size,
    shutDown() {
      shutDown = true;
      for (const waiter of waiters.splice(0)) waiter(undefined);
    },
  };
}
