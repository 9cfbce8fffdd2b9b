import type { Logger } from '../../runtime/index.js';
import type { PushQueue } from './push-queue.js';
import { errorMessage } from '../../runtime/index.js';

export interface PushWorkers {
  /** Resolves when every worker has stopped (after the queue is shut down). */
  readonly done: Promise<void>;
}

/**
 * `concurrency` workers (PILOT_PUSH_THROTTLE) taking connections off the push queue: at most
 * that many connections are being pushed at any time.
 */
export function startPushWorkers<K, T>(queue: PushQueue<K, T>, concurrency: number, work: (key: K, item: T) => Promise<void>, log: Logger): PushWorkers {
  const worker = async (): Promise<void> => {
    for (;;) {
      const entry = await queue.dequeue();
      if (!entry) return;
      const [key, item] = entry;
      try {
        await work(key, item);
      } catch (error) {
        log.error({ error: errorMessage(error) }, 'push failed');
      } finally {
        queue.markDone(key);
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, concurrency) }, () => worker());
  return { done: Promise.all(workers).then(() => undefined) };
}
