import type { PushFindingsLedger } from './push-findings.js';
import type { ConfigKey, PushRequest } from './push-request.js';

/** One immutable push context with its version. */
export interface PushSnapshot<C> {
  /** Increases with every context built. */
  readonly seq: number;
  /** `<RFC 3339 time>/<counter>`: changes on full pushes only. */
  readonly version: string;
  readonly context: C;
  readonly request: PushRequest;
  readonly builtAt: number;
  /** What the context and the generators of this push found wrong (the health gauges). */
  readonly findings: PushFindingsLedger;
}

/** What `/debug/push_status` shows about the last push. */
export interface PushStatus {
  readonly version: string;
  readonly full: boolean;
  readonly reasons: Readonly<Record<string, number>>;
  readonly configsUpdated: readonly ConfigKey[];
  readonly triggeredAt: number;
  readonly contextBuiltAt: number;
  readonly proxiesQueued: number;
}
