import type { ConfigKey, PushReason, PushRequest } from '../../controllers/index.js';
import { formatConfigKey } from '../../names/index.js';

// The ConfigUpdater seam is the model's (controllers/model/config-updater.ts); re-exported for xDS users.
export type { ConfigKey, ConfigUpdater, PushReason, PushRequest } from '../../controllers/index.js';

/** Several push requests merged into one: what the debouncer and the push queue carry. */
export interface MergedPushRequest {
  readonly full: boolean;
  /** Empty means anything may have changed. */
  readonly configsUpdated: readonly ConfigKey[];
  /** How many requests of each reason were merged. */
  readonly reasons: ReadonlyMap<PushReason, number>;
  /** The earliest start of the merged requests. */
  readonly startedAt: number;
}

export function toMerged(request: PushRequest): MergedPushRequest {
  return {
    full: request.full,
    configsUpdated: dedupe(request.configsUpdated),
    reasons: new Map([[request.reason, 1]]),
    startedAt: request.startedAt,
  };
}

/**
 * Merges two requests as the reference does: full is OR-ed, configs are unioned unless one
 * side says "anything" (empty), reason counts add up, the earliest start is kept.
 */
export function mergePushRequests(a: MergedPushRequest | undefined, b: MergedPushRequest): MergedPushRequest {
  if (!a) return b;
  const reasons = new Map(a.reasons);
  for (const [reason, count] of b.reasons) reasons.set(reason, (reasons.get(reason) ?? 0) + count);
  const anything = a.configsUpdated.length === 0 || b.configsUpdated.length === 0;
  return {
    full: a.full || b.full,
    configsUpdated: anything ? [] : dedupe([...a.configsUpdated, ...b.configsUpdated]),
    reasons,
    startedAt: Math.min(a.startedAt, b.startedAt),
  };
}

/** The seam's shape of a merged request: the most frequent reason stands for all. */
export function toPushRequest(merged: MergedPushRequest): PushRequest {
  let reason: PushReason = 'unknown';
  let best = 0;
  for (const [candidate, count] of merged.reasons) {
    if (count > best) {
      best = count;
      reason = candidate;
    }
  }
  return { full: merged.full, configsUpdated: merged.configsUpdated, reason, startedAt: merged.startedAt };
}

function dedupe(keys: readonly ConfigKey[]): ConfigKey[] {
  const seen = new Map<string, ConfigKey>();
  for (const key of keys) seen.set(formatConfigKey(key), key);
  return [...seen.values()];
}
