import type { ConfigKey } from '../model/config-key.js';
import type { ConfigUpdater, PushReason } from '../model/config-updater.js';
import type { Logger } from '../../runtime/index.js';
import { errorMessage } from '../../runtime/index.js';

/** How reconcilers hand a model change to the push pipeline; a failing updater never fails a reconcile. */
export interface PushEmitter {
  push(request: { full: boolean; reason: PushReason; configsUpdated: readonly ConfigKey[]; startedAt: number }): void;
}

export function newPushEmitter(updater: ConfigUpdater, log: Logger): PushEmitter {
  return {
    push(request) {
      try {
        updater.configUpdate({
          full: request.full,
          reason: request.reason,
          configsUpdated: request.configsUpdated,
          startedAt: request.startedAt,
        });
      } catch (error) {
        log.error({ reason: request.reason, error: errorMessage(error) }, 'config update handler failed');
      }
    },
  };
}
