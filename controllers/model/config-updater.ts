import type { ConfigKey } from './config-key.js';

/** Why a push is wanted: a bounded set, usable as a metric label. */
export const PUSH_REASONS = ['config', 'endpoint', 'service', 'proxy', 'namespace', 'mesh-config', 'unknown'] as const;
export type PushReason = (typeof PUSH_REASONS)[number];

/**
 * A model change as data. `full: false` means only endpoints changed (EDS alone is enough);
 * `configsUpdated` names every changed object so each generator can tell whether it is affected.
 */
export interface PushRequest {
  readonly full: boolean;
  readonly configsUpdated: readonly ConfigKey[];
  readonly reason: PushReason;
  /** When the change was picked up (clock milliseconds), for convergence metrics. */
  readonly startedAt: number;
}

/**
 * The seam between the model and the push pipeline: the reconcilers call it after every model
 * change, the xDS side implements it (debounce, merge, push). It must not block.
 */
export interface ConfigUpdater {
  configUpdate(request: PushRequest): void;
}
