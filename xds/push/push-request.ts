import type { ConfigKey, PushReason, PushRequest } from '../../controllers/index.js';
import { formatConfigKey } from '../../names/index.js';

// The ConfigUpdater seam is the model's (controllers/model/config-updater.ts); re-exported for xDS users.
export { pushRequestOf, type ConfigKey, type ConfigUpdater, type PushChange, type PushReason, type PushRequest } from '../../controllers/index.js';

/** A request as the debouncer keeps it: each changed config named once. */
export function normalizePushRequest(request: PushRequest): PushRequest {
  const configsUpdated = dedupe(request.configsUpdated);
  return configsUpdated.length === request.configsUpdated.length ? request : { ...request, configsUpdated };
}

/**
 * Merges two requests as the reference does: full is OR-ed, configs are unioned unless one
 * side says "anything" (empty), reason counts add up, the earliest start is kept.
 */
export function mergePushRequests(a: PushRequest | undefined, b: PushRequest): PushRequest {
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

const PROXY_REQUEST: ReadonlyMap<PushReason, number> = new Map([['proxy', 1]]);

/** What a proxy's own request asks for: everything it subscribes to, as of now. */
export function proxyRequestPush(startedAt: number): PushRequest {
  return { full: true, configsUpdated: [], reasons: PROXY_REQUEST, startedAt };
}

function dedupe(keys: readonly ConfigKey[]): ConfigKey[] {
  const seen = new Map<string, ConfigKey>();
  for (const key of keys) seen.set(formatConfigKey(key), key);
  return [...seen.values()];
}
