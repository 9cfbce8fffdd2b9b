import type { EncodedResource } from './generator.js';

/** A resource the proxy holds: its version, and the bytes when we sent them (not for delta's initial versions). */
export interface HeldResource {
  readonly version: string;
  readonly resource?: EncodedResource;
  readonly sentAt: number;
}

interface SentBatch {
  readonly resources: readonly EncodedResource[];
  readonly sentAt: number;
}

/** What a proxy holds of one type, for reading. */
export type ReadonlyHeldResources = Pick<HeldResources, 'empty' | 'get' | 'has' | 'size' | 'names' | 'entries'>;

/** Batches kept unindexed before they are folded into the index. */
const MAX_BATCHES = 8;

/**
 * What a proxy holds of one type, by resource name. A response's resources are kept as the
 * response's own array and indexed by name only when something looks one up: a connection
 * storm sends thousands of resources to every proxy and looks up none of them, and a map entry
 * per resource per proxy was most of the cost of sending them (and of a proxy's memory).
 */
export class HeldResources {
  private batches: SentBatch[] = [];
  private index: Map<string, HeldResource> | undefined;

  /** Records the resources of one response, sent at `sentAt`: each replaces what was held under its name. */
  sent(resources: readonly EncodedResource[], sentAt: number): void {
    if (resources.length === 0) return;
    if (this.index) {
      for (const resource of resources) this.index.set(resource.name, { version: resource.version, resource, sentAt });
      return;
    }
    this.batches.push({ resources, sentAt });
    if (this.batches.length > MAX_BATCHES) this.indexed();
  }

  /** True when nothing is held. */
  get empty(): boolean {
    return this.index ? this.index.size === 0 : this.batches.length === 0;
  }

  /** Records a version the proxy says it holds (delta's initial versions), without bytes. */
  set(name: string, version: string, sentAt: number): void {
    this.indexed().set(name, { version, sentAt });
  }

  get(name: string): HeldResource | undefined {
    return this.lookup()?.get(name);
  }

  has(name: string): boolean {
    return this.lookup()?.has(name) ?? false;
  }

  delete(name: string): void {
    this.lookup()?.delete(name);
  }

  clear(): void {
    this.batches = [];
    this.index = undefined;
  }

  get size(): number {
    return this.lookup()?.size ?? 0;
  }

  names(): IterableIterator<string> {
    return (this.lookup() ?? new Map<string, HeldResource>()).keys();
  }

  entries(): IterableIterator<[string, HeldResource]> {
    return (this.lookup() ?? new Map<string, HeldResource>()).entries();
  }

  /** Keeps only the names `keep` accepts. */
  retain(keep: (name: string) => boolean): void {
    if (this.index) {
      for (const name of this.index.keys()) if (!keep(name)) this.index.delete(name);
      return;
    }
    // Without an index each batch is filtered; a batch that loses nothing stays the same (shared) array.
    this.batches = this.batches
      .map((batch) =>
        batch.resources.every((resource) => keep(resource.name)) ? batch : { ...batch, resources: batch.resources.filter((resource) => keep(resource.name)) },
      )
      .filter((batch) => batch.resources.length > 0);
  }

  /** The index, built now if needed; undefined while nothing is held and nothing was indexed (building one would make every later response pay for it). */
  private lookup(): Map<string, HeldResource> | undefined {
    return this.index === undefined && this.batches.length === 0 ? undefined : this.indexed();
  }

  private indexed(): Map<string, HeldResource> {
    if (this.index) return this.index;
    const index = new Map<string, HeldResource>();
    for (const { resources, sentAt } of this.batches) {
      for (const resource of resources) index.set(resource.name, { version: resource.version, resource, sentAt });
    }
    this.batches = [];
    this.index = index;
    return index;
  }
}
