import { isDeeplyFrozen } from '../../kube-patch/index.js';

/**
 * Memoizes a template render by what the render read, not by its whole input: while a template
 * renders, a proxy over its data records every value it looked at (a leaf's value, whether a key
 * exists, an object's keys, a value's type). A later input for which every recorded read gives the
 * same answer renders the same text, so the parsed result is reused. Pods of one workload differ in
 * names and labels the templates never read; they share one render. An object frozen all the way
 * down (the mesh config, the injector's values) cannot change: it is handed out as itself and
 * counts as one read, that the next input holds the very same object.
 */

type Path = readonly PropertyKey[];

/**
 * One read, of `key` of the object at `at` (the path of that object, shared by all its reads), or
 * of that object's own key list.
 */
type Read =
  | { readonly at: Path; readonly key: PropertyKey; readonly kind: 'value'; readonly value: unknown; readonly frozen: boolean }
  | { readonly at: Path; readonly key: PropertyKey; readonly kind: 'shape'; readonly shape: Shape }
  | { readonly at: Path; readonly key: PropertyKey; readonly kind: 'has'; readonly present: boolean }
  | { readonly at: Path; readonly key: PropertyKey; readonly kind: 'own'; readonly present: boolean }
  | { readonly at: Path; readonly key: PropertyKey; readonly kind: 'keys'; readonly keys: string }
  | { readonly at: Path; readonly key: PropertyKey; readonly kind: 'same'; readonly object: object };

type Shape = 'array' | 'object' | 'function';

interface Entry<R> {
  /** Reordered as lookups go: a read that told an input apart moves first, to tell the next one apart sooner. */
  readonly reads: Read[];
  readonly result: R;
}

export interface RenderMemo<D extends object, R> {
  /** The result for `data`: a remembered one whose reads all still hold, else `render` run on tracked data. */
  get(data: D): R;
}

/**
 * `render` must be a pure function of what it reads from its data (templates and helpers are).
 * `capacity` bounds the remembered results (the least recently used goes first).
 */
export function newRenderMemo<D extends object, R>(render: (data: D) => R, capacity = 32): RenderMemo<D, R> {
  const entries: Entry<R>[] = [];
  // Tracking makes a render slower: while almost nothing is reused (a stream of new workloads),
  // only every TRACK_EVERY-th miss is tracked and remembered, the others render plainly.
  let hitRate = 1;
  let plainMisses = 0;
  const cannotChange = cannotChangeTest();
  return {
    get(data) {
      const index = entries.findIndex((entry) => allHold(entry.reads, data));
      hitRate += ((index >= 0 ? 1 : 0) - hitRate) / RATE_WINDOW;
      if (index >= 0) {
        const [hit] = entries.splice(index, 1) as [Entry<R>];
        entries.unshift(hit);
        return hit.result;
      }
      if (hitRate < COLD_HIT_RATE && plainMisses++ % TRACK_EVERY !== 0) return render(data);
      const reads: Read[] = [];
      const result = render(track(data, [], { reads, cannotChange }));
      entries.unshift({ reads, result });
      if (entries.length > capacity) entries.pop();
      return result;
    },
  };
}

/** The hit rate is a moving average over about this many lookups. */
const RATE_WINDOW = 16;
const COLD_HIT_RATE = 0.1;
const TRACK_EVERY = 16;

function allHold(reads: Read[], data: object): boolean {
  // Reads of one object come in a row, mostly: it is looked up once for them all.
  let at: Path | undefined;
  let target: unknown;
  for (let i = 0; i < reads.length; i++) {
    const read = reads[i] as Read;
    if (read.at !== at) {
      at = read.at;
      target = resolve(data, at);
    }
    if (holds(read, target)) continue;
    if (i > 0) {
      reads.splice(i, 1);
      reads.unshift(read);
    }
    return false;
  }
  return true;
}

function shapeOf(value: object): Shape {
  if (Array.isArray(value)) return 'array';
  return typeof value === 'function' ? 'function' : 'object';
}

const KIND_BITS = { value: 1, shape: 2, has: 4, own: 8, keys: 16, same: 32 } as const;
/** Where a node's own key-list read is noted among its keys' reads. */
const OWN_KEYS = Symbol('ownKeys');

/** One tracked object: its path, which reads of each key are already recorded, its children's proxies. */
interface Node {
  readonly path: Path;
  readonly recorded: Map<PropertyKey, number>;
  readonly children: Map<PropertyKey, unknown>;
}

/** What a tracked render records into, and how it tells objects that cannot change. */
interface Tracking {
  readonly reads: Read[];
  readonly cannotChange: (value: object) => boolean;
}

/** Whether an object is frozen all the way down; the verdicts on frozen objects are kept (they cannot change). */
function cannotChangeTest(): (value: object) => boolean {
  const verdicts = new WeakMap<object, boolean>();
  return (value) => {
    if (!Object.isFrozen(value)) return false;
    const known = verdicts.get(value);
    if (known !== undefined) return known;
    const deep = isDeeplyFrozen(value);
    verdicts.set(value, deep);
    return deep;
  };
}

/** Records `read` of `key` under `node` once. */
function record(node: Node, reads: Read[], key: PropertyKey, kind: keyof typeof KIND_BITS, make: (at: Path) => Read): void {
  const bits = node.recorded.get(key) ?? 0;
  if ((bits & KIND_BITS[kind]) !== 0) return;
  node.recorded.set(key, bits | KIND_BITS[kind]);
  reads.push(make(node.path));
}

/** A proxy over `value` that records what is read through it, and hands out tracked children (one proxy per child). */
function track<T>(value: T, path: Path, tracking: Tracking): T {
  if (typeof value !== 'object' || value === null) return value;
  const { reads } = tracking;
  const node: Node = { path, recorded: new Map(), children: new Map() };
  return new Proxy(value, {
    get(target, key, receiver) {
      const child: unknown = Reflect.get(target, key, receiver);
      if (typeof key === 'symbol') return child;
      // What cannot change is read whole: the next input must hold this very object.
      if (typeof child === 'object' && child !== null && tracking.cannotChange(child)) {
        record(node, reads, key, 'same', (at) => ({ at, key, kind: 'same', object: child }));
        return child;
      }
      const descriptor = Reflect.getOwnPropertyDescriptor(target, key);
      // A frozen property must be handed out as itself: its whole content counts as read.
      if (descriptor && !descriptor.configurable && !descriptor.writable) {
        record(node, reads, key, 'value', (at) => ({ at, key, kind: 'value', value: JSON.stringify(child), frozen: true }));
        return child;
      }
      if (typeof child === 'object' && child !== null) {
        record(node, reads, key, 'shape', (at) => ({ at, key, kind: 'shape', shape: shapeOf(child) }));
        let proxy = node.children.get(key);
        if (proxy === undefined) {
          proxy = track(child, [...path, key], tracking);
          node.children.set(key, proxy);
        }
        return proxy;
      }
      record(node, reads, key, 'value', (at) => ({ at, key, kind: 'value', value: child, frozen: false }));
      return child;
    },
    has(target, key) {
      const present = Reflect.has(target, key);
      if (typeof key !== 'symbol') record(node, reads, key, 'has', (at) => ({ at, key, kind: 'has', present }));
      return present;
    },
    getOwnPropertyDescriptor(target, key) {
      const descriptor = Reflect.getOwnPropertyDescriptor(target, key);
      if (typeof key !== 'symbol') record(node, reads, key, 'own', (at) => ({ at, key, kind: 'own', present: descriptor !== undefined }));
      return descriptor;
    },
    ownKeys(target) {
      const keys = Reflect.ownKeys(target);
      record(node, reads, OWN_KEYS, 'keys', (at) => ({ at, key: OWN_KEYS, kind: 'keys', keys: keys.filter((k) => typeof k === 'string').join('\u0000') }));
      return keys;
    },
    set() {
      throw new TypeError('a template may not change its data');
    },
    deleteProperty() {
      throw new TypeError('a template may not change its data');
    },
  });
}

/** The object at `path` under `data`, or what stands there instead (undefined, a primitive). */
function resolve(data: object, path: Path): unknown {
  let node: unknown = data;
  for (let i = 0; i < path.length; i++) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[path[i] as PropertyKey];
  }
  return node;
}

/** Whether `read` gives the same answer on `target`, the object at its path in the new data. */
function holds(read: Read, target: unknown): boolean {
  if (typeof target !== 'object' || target === null) return false;
  if (read.kind === 'keys')
    return (
      Reflect.ownKeys(target)
        .filter((k) => typeof k === 'string')
        .join('\u0000') === read.keys
    );
  const key = read.key;
  switch (read.kind) {
    case 'has':
      return Reflect.has(target, key) === read.present;
    case 'own':
      return Object.prototype.hasOwnProperty.call(target, key) === read.present;
    case 'same':
      return (target as Record<PropertyKey, unknown>)[key] === read.object;
    case 'shape': {
      const value = (target as Record<PropertyKey, unknown>)[key];
      return typeof value === 'object' && value !== null && shapeOf(value) === read.shape;
    }
    default: {
      const value = (target as Record<PropertyKey, unknown>)[key];
      // A value read as itself (a primitive handed out by the proxy) is the same if it is the same.
      if (!read.frozen) return Object.is(value, read.value);
      const descriptor = Reflect.getOwnPropertyDescriptor(target, key);
      return descriptor !== undefined && !descriptor.configurable && !descriptor.writable && JSON.stringify(value) === read.value;
    }
  }
}
