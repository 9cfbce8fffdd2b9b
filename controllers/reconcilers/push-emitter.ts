import { pushRequestOf, type ConfigUpdater, type PushChange } from '../model/config-updater.js';
import type { Logger } from '../../runtime/index.js';
import { errorMessage } from '../../runtime/index.js';

/** How reconcilers hand a model change to the push pipeline; a failing updater never fails a reconcile. */
export interface PushEmitter {
  push(change: PushChange): void;
}

export function newPushEmitter(updater: ConfigUpdater, log: Logger): PushEmitter {
  return {
    push(request) {
      try {
        updater.configUpdate(pushRequestOf(request));
      } catch (error) {
        log.error({ reason: request.reason, error: errorMessage(error) }, 'config update handler failed');
      }
    },
  };
}
