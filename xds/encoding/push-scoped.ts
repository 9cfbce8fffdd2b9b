import type { PushMemo } from '../generator.js';

/** What a per-push cache needs to know of a push. */
export interface PushIdentity {
  /** Increases with every push context built. */
  readonly seq: number;
  /** Changes on full pushes only. */
  readonly version: string;
}

/**
 * Values kept for one push, by type URL and key: the first lookup for a push of another sequence
 * number drops them all.
 */
export class PushScoped<V> {
  private seq = -1;
  private readonly byType = new Map<string, Map<string, V>>();

  /** The type's values for the push `seq`. */
  of(seq: number, typeUrl: string): Map<string, V> {
    if (seq !== this.seq) {
      this.byType.clear();
      this.seq = seq;
    }
    let ofType = this.byType.get(typeUrl);
    if (!ofType) this.byType.set(typeUrl, (ofType = new Map()));
    return ofType;
  }
}

/** A generator's memo over one push's values of one type. */
export class PushMemoMap implements PushMemo {
  constructor(private readonly values: Map<string, unknown> = new Map()) {}

  get<T>(key: string, build: () => T): T {
    const known = this.values.get(key);
    if (known !== undefined || this.values.has(key)) return known as T;
    const value = build();
    this.values.set(key, value);
    return value;
  }
}

/** The request's memo; a memo of its own (sharing nothing) for a request without one. */
export function memoOf(request: { readonly memo?: PushMemo }): PushMemo {
  return request.memo ?? new PushMemoMap();
}
