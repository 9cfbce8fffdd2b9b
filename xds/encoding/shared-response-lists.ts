import type { EncodedAny } from '../envoy/encoded-any.js';
import type { EncodedResource } from '../generator.js';

/** Lists shorter than this are cheap to write resource by resource. */
const MIN_SHARED_LENGTH = 16;
/** Lists kept under one key (equal type, length and fingerprint) before the oldest is dropped. */
const MAX_LISTS_PER_KEY = 16;
/** The resources' bytes the kept lists may add up to (the encoder holds each list's bytes once more). */
const MAX_SHARED_BYTES = 64 * 1024 * 1024;

/** A delta `Resource` as a response carries it. */
export interface DeltaResourceMessage {
  readonly name: string;
  readonly version: string;
  readonly resource: EncodedAny;
}

/**
 * One list of encoded resources that many responses send alike, frozen, with the shapes the
 * responses carry derived once: the response encoder writes a frozen list's bytes once and
 * copies them whole into every response that carries the same list.
 */
export class SharedResponseList {
  private anyList: readonly EncodedAny[] | undefined;
  private deltaList: readonly DeltaResourceMessage[] | undefined;

  constructor(
    readonly resources: readonly EncodedResource[],
    readonly bytes: number,
  ) {}

  /** The resources of a state-of-the-world response. */
  get anys(): readonly EncodedAny[] {
    this.anyList ??= Object.freeze(this.resources.map((resource) => resource.any));
    return this.anyList;
  }

  /** The resources of a delta response. */
  get deltaResources(): readonly DeltaResourceMessage[] {
    this.deltaList ??= Object.freeze(this.resources.map(({ name, version, any }) => Object.freeze({ name, version, resource: any })));
    return this.deltaList;
  }
}

/**
 * The lists of encoded resources responses send, shared by content: the sidecars of a namespace
 * get the same thousand clusters and load assignments, in the same order, as the same encoded
 * objects. A list is matched by the identity of each element, so only lists built from the same
 * encodings meet; the least recently used lists are forgotten first.
 */
export class SharedResponseLists {
  private readonly lists = new Map<string, SharedResponseList[]>();
  private bytes = 0;

  /** The shared list equal to `resources` (whose `any` bytes add up to `bytes`), or undefined for a short list. */
  share(typeUrl: string, resources: readonly EncodedResource[], bytes: number): SharedResponseList | undefined {
    const length = resources.length;
    if (length < MIN_SHARED_LENGTH || bytes > MAX_SHARED_BYTES) return undefined;
    const key = `${typeUrl}\n${length}\n${fingerprint(resources)}`;
    const candidates = this.lists.get(key) ?? [];
    const known = candidates.find((candidate) => sameElements(candidate.resources, resources));
    this.lists.delete(key);
    if (known) {
      this.lists.set(key, candidates);
      return known;
    }
    const shared = new SharedResponseList(Object.freeze([...resources]), bytes);
    candidates.push(shared);
    if (candidates.length > MAX_LISTS_PER_KEY) this.bytes -= (candidates.shift() as SharedResponseList).bytes;
    this.lists.set(key, candidates);
    this.bytes += bytes;
    this.evictOverBudget();
    return shared;
  }

  private evictOverBudget(): void {
    for (const [key, candidates] of this.lists) {
      if (this.bytes <= MAX_SHARED_BYTES) return;
      this.lists.delete(key);
      for (const candidate of candidates) this.bytes -= candidate.bytes;
    }
  }
}

/** Elements whose versions make a list's key: the first ones (a proxy's own resources sort first), then a spread. */
const FINGERPRINT_HEAD = 16;
const FINGERPRINT_SPREAD = 16;

/**
 * A hash of some elements' versions (digests of their bytes): all of the first sixteen, where a
 * proxy's own resources sort (`inbound|…` before `outbound|…`), and sixteen spread over the rest.
 * Reading every element's version cost more than the rest of the lookup (each a string of its
 * own to reach in a large heap); lists meeting under a key are told apart by comparing their
 * elements' identities, which reads only the two arrays.
 */
function fingerprint(resources: readonly EncodedResource[]): number {
  let hash = 0;
  const mix = (index: number): void => {
    const { version } = resources[index] as EncodedResource;
    hash = (Math.imul(hash, 31) + ((version.charCodeAt(0) << 16) ^ (version.charCodeAt(1) << 8) ^ version.charCodeAt(2))) | 0;
  };
  const head = Math.min(FINGERPRINT_HEAD, resources.length);
  for (let i = 0; i < head; i++) mix(i);
  const step = Math.max(1, Math.floor((resources.length - head) / FINGERPRINT_SPREAD));
  for (let i = head + step - 1; i < resources.length; i += step) mix(i);
  return hash;
}

function sameElements(a: readonly EncodedResource[], b: readonly EncodedResource[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
