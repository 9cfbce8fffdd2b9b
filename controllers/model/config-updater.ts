import type { ConfigKey } from './config-key.js';

/** Why a push is wanted: a bounded set, usable as a metric label. */
export const PUSH_REASONS = ['config', 'endpoint', 'service', 'proxy', 'namespace', 'mesh-config', 'unknown'] as const;
export type PushReason = (typeof PUSH_REASONS)[number];

/**
 * A model change as data, and the one shape a push keeps from the debouncer through the queue to
 * the generators. `full: false` means only endpoints changed (EDS alone is enough);
 * `configsUpdated` names every changed object so each generator can tell whether it is affected
 * (empty: anything may have changed).
 */
export interface PushRequest {
  readonly full: boolean;
  readonly configsUpdated: readonly ConfigKey[];
  /** How many changes of each reason the request stands for: one for a change, summed when requests merge. */
  readonly reasons: ReadonlyMap<PushReason, number>;
  /** When the (earliest) change was picked up (clock milliseconds), for convergence metrics. */
  readonly startedAt: number;
}

/** One model change, as a reconciler reports it. */
export interface PushChange {
  readonly full: boolean;
  readonly reason: PushReason;
  /** Absent: anything may have changed. */
  readonly configsUpdated?: readonly ConfigKey[];
  readonly startedAt: number;
}

/** The push request of one change. */
export function pushRequestOf(change: PushChange): PushRequest {
  return { full: change.full, configsUpdated: change.configsUpdated ?? [], reasons: new Map([[change.reason, 1]]), startedAt: change.startedAt };
}

/**
 * The seam between the model and the push pipeline: the reconcilers call it after every model
 * change, the xDS side implements it (debounce, merge, push). It must not block.
 */
export interface ConfigUpdater {
  configUpdate(request: PushRequest): void;
}
