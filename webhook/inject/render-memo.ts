/**
 * Memoizes a template render by what the render read, not by its whole input: while a template
 * renders, a proxy over its data records every value it looked at (a leaf's value, whether a key
 * exists, an object's keys, a value's type). A later input for which every recorded read gives the
 * same answer renders the same text, so the parsed result is reused. Pods of one workload differ in
 * names and labels the templates never read; they share one render.
 */

type Path = readonly PropertyKey[];

type Read =
  | { readonly path: Path; readonly kind: 'value'; readonly value: unknown }
  | { readonly path: Path; readonly kind: 'shape'; readonly shape: Shape }
  | { readonly path: Path; readonly kind: 'has'; readonly present: boolean }
  | { readonly path: Path; readonly kind: 'own'; readonly present: boolean }
  | { readonly path: Path; readonly kind: 'keys'; readonly keys: string };

type Shape = 'array' | 'object' | 'function';

interface Entry<R> {
  readonly reads: readonly Read[];
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
  return {
    get(data) {
      const index = entries.findIndex((entry) => entry.reads.every((read) => holds(read, data)));
      if (index >= 0) {
        const [hit] = entries.splice(index, 1) as [Entry<R>];
        entries.unshift(hit);
        return hit.result;
      }
      const reads = new Map<string, Read>();
      const result = render(track(data, [], reads));
      entries.unshift({ reads: [...reads.values()], result });
      if (entries.length > capacity) entries.pop();
      return result;
    },
  };
}

function shapeOf(value: object): Shape {
  if (Array.isArray(value)) return 'array';
  return typeof value === 'function' ? 'function' : 'object';
}

function record(reads: Map<string, Read>, read: Read): void {
  const key = `${read.kind}:${read.path.map(String).join('\u0000')}`;
  if (!reads.has(key)) reads.set(key, read);
}

/** A proxy over `value` that records what is read through it, and hands out tracked children. */
function track<T>(value: T, path: Path, reads: Map<string, Read>): T {
  if (typeof value !== 'object' || value === null) return value;
  return new Proxy(value, {
    get(target, key, receiver) {
      const child: unknown = Reflect.get(target, key, receiver);
      if (typeof key === 'symbol') return child;
      const childPath = [...path, key];
      const descriptor = Reflect.getOwnPropertyDescriptor(target, key);
      // A frozen property must be handed out as itself: its whole content counts as read.
      if (descriptor && !descriptor.configurable && !descriptor.writable) {
        record(reads, { path: childPath, kind: 'value', value: JSON.stringify(child) });
        return child;
      }
      if (typeof child === 'object' && child !== null) {
        record(reads, { path: childPath, kind: 'shape', shape: shapeOf(child) });
        return track(child, childPath, reads);
      }
      record(reads, { path: childPath, kind: 'value', value: child });
      return child;
    },
    has(target, key) {
      const present = Reflect.has(target, key);
      if (typeof key !== 'symbol') record(reads, { path: [...path, key], kind: 'has', present });
      return present;
    },
    getOwnPropertyDescriptor(target, key) {
      const descriptor = Reflect.getOwnPropertyDescriptor(target, key);
      if (typeof key !== 'symbol') record(reads, { path: [...path, key], kind: 'own', present: descriptor !== undefined });
      return descriptor;
    },
    ownKeys(target) {
      const keys = Reflect.ownKeys(target);
      record(reads, { path, kind: 'keys', keys: keys.filter((k) => typeof k === 'string').join('\u0000') });
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

/** Whether `read` gives the same answer on `data`. */
function holds(read: Read, data: object): boolean {
  let parent: unknown = data;
  const last = read.path.length - 1;
  for (let i = 0; i < last; i++) {
    if (typeof parent !== 'object' || parent === null) return false;
    parent = (parent as Record<PropertyKey, unknown>)[read.path[i] as PropertyKey];
  }
  if (read.kind === 'keys') {
    const target = last >= 0 && typeof parent === 'object' && parent !== null ? (parent as Record<PropertyKey, unknown>)[read.path[last] as PropertyKey] : parent;
    return typeof target === 'object' && target !== null && Reflect.ownKeys(target).filter((k) => typeof k === 'string').join('\u0000') === read.keys;
  }
  if (typeof parent !== 'object' || parent === null) return false;
  const key = read.path[last] as PropertyKey;
  switch (read.kind) {
    case 'has':
      return Reflect.has(parent, key) === read.present;
    case 'own':
      return Object.prototype.hasOwnProperty.call(parent, key) === read.present;
    case 'shape': {
      const value = (parent as Record<PropertyKey, unknown>)[key];
      return typeof value === 'object' && value !== null && shapeOf(value) === read.shape;
    }
    default: {
      const value = (parent as Record<PropertyKey, unknown>)[key];
      const descriptor = Reflect.getOwnPropertyDescriptor(parent, key);
      if (descriptor && !descriptor.configurable && !descriptor.writable) return JSON.stringify(value) === read.value;
      return Object.is(value, read.value);
    }
  }
}
