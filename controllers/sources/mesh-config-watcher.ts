import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { buildMeshConfig, MeshConfigError, readMeshConfigFile } from '../../crds/index.js';
import type { MeshConfig } from '../../crds/index.js';
import { errorCode, MeshError, newRealClock, errorMessage, untilAborted } from '../../runtime/index.js';
import type { Clock, Logger, Runnable, TimerHandle } from '../../runtime/index.js';
import { stableJson } from '../stable-json.js';

export interface MeshConfigWatcherOptions {
  /** `--meshConfig`. */
  file: string;
  log: Logger;
  clock?: Clock;
  /** The shared mesh config text (`SHARED_MESH_CONFIG`'s ConfigMap), merged underneath; `setSharedText` replaces it. */
  sharedText?: string;
  /** Wait after a file-system event before reading, so a burst of writes costs one read. Default 100 ms. */
  debounceMs?: number;
  /** Period of the re-read that catches anything the watcher missed. Default 5 s. */
  pollIntervalMs?: number;
  /** Whether to use `fs.watch` on the file's folder. Default true. */
  watch?: boolean;
  /** Called for every rejected edit (the last good config stays): wire an error counter here. */
  onError?: (error: MeshConfigError) => void;
}

export interface MeshConfigWatcher extends Runnable {
  /** The last good config. */
  current(): MeshConfig;
  /** Called with each new config (not with the current one); returns the unsubscribe function. */
  subscribe(handler: (config: MeshConfig) => void): () => void;
  /** Replaces the shared config (`undefined` or empty: none); subscribers hear of a resulting change. */
  setSharedText(text: string | undefined): void;
}

/**
 * Loads the mesh config at once (throwing a `MeshConfigError` if it is invalid, so start-up
 * fails with the file and line), then, while started, re-reads the file when its folder changes
 * (a debounced `fs.watch` on the folder, which also sees a ConfigMap mount swap its `..data`
 * link) and every `pollIntervalMs`. A bad edit is logged and the last good config stays; a
 * removed file means the defaults, as at start-up. A file that turns up empty is read again after
 * the debounce before it counts (a truncate-then-write seen half way).
 */
export function newMeshConfigWatcher(options: MeshConfigWatcherOptions): MeshConfigWatcher {
  const { file, log } = options;
  const clock = options.clock ?? newRealClock();
  const debounceMs = options.debounceMs ?? 100;
  const pollIntervalMs = options.pollIntervalMs ?? 5_000;
  const subscribers: ((config: MeshConfig) => void)[] = [];

  let fileText = readMeshConfigFile(file);
  let sharedText = options.sharedText;
  let current = buildMeshConfig(fileText, file, sharedText);
  let currentJson = stableJson(current);
  let started = false;
  /** The inputs last rejected, so an unchanged bad file is reported once, not at every poll. */
  let rejected: { fileText: string | undefined; sharedText: string | undefined } | undefined;

  /** Rebuilds from the given inputs; keeps them only when they make a valid config. */
  const evaluate = (nextFileText: string | undefined, nextSharedText: string | undefined): void => {
    if (nextFileText === fileText && nextSharedText === sharedText) return;
    if (rejected && rejected.fileText === nextFileText && rejected.sharedText === nextSharedText) return;
    let next: MeshConfig;
    try {
      next = buildMeshConfig(nextFileText, file, nextSharedText);
    } catch (error) {
      if (!(error instanceof MeshConfigError)) throw error;
      rejected = { fileText: nextFileText, sharedText: nextSharedText };
      const first = error.issues[0];
      log.error({ origin: error.origin, line: first?.line, column: first?.column, error: error.message }, 'mesh config rejected, keeping the last good one');
      try {
        options.onError?.(error);
      } catch (callbackError) {
        log.error({ error: String(callbackError) }, 'mesh config error callback failed');
      }
      return;
    }
    rejected = undefined;
    fileText = nextFileText;
    sharedText = nextSharedText;
    const nextJson = stableJson(next);
    if (nextJson === currentJson) return;
    current = next;
    currentJson = nextJson;
    log.info({ file }, 'mesh config changed');
    for (const handler of subscribers.slice()) {
      try {
        handler(next);
      } catch (error) {
        log.error({ error: errorMessage(error) }, 'mesh config subscriber failed');
      }
    }
  };

  let stopped = false;
  let reading: Promise<void> | undefined;
  let readAgain = false;
  let debounce: TimerHandle | undefined;
  /** Read empty once while it had content: a writer may have truncated it and not written yet. */
  let emptyOnce = false;

  const reread = async (): Promise<void> => {
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ENOENT') {
        log.error({ file, error: errorMessage(error) }, 'mesh config cannot be read, keeping the last good one');
        return;
      }
      text = undefined;
    }
    if (text === '' && fileText !== undefined && fileText !== '' && !emptyOnce) {
      emptyOnce = true;
      scheduleRead();
      return;
    }
    emptyOnce = false;
    evaluate(text, sharedText);
  };

  const requestRead = (): void => {
    if (stopped) return;
    if (reading) {
      readAgain = true;
      return;
    }
    reading = (async () => {
      do {
        readAgain = false;
        await reread();
      } while (readAgain && !stopped);
    })().finally(() => (reading = undefined));
  };

  const scheduleRead = (): void => {
    if (stopped) return;
    debounce ??= clock.setTimer(() => {
      debounce = undefined;
      requestRead();
    }, debounceMs);
  };

  return {
    name: 'mesh-config',
    group: 'cache',

    current: () => current,

    subscribe(handler) {
      subscribers.push(handler);
      return () => {
        const at = subscribers.indexOf(handler);
        if (at >= 0) subscribers.splice(at, 1);
      };
    },

    setSharedText(text) {
      evaluate(fileText, text === undefined || text.trim() === '' ? undefined : text);
    },

    async start(signal: AbortSignal): Promise<void> {
      if (started) throw new MeshError('already-started', 'mesh config watcher: start() called twice');
      started = true;
      let poll: TimerHandle | undefined;
      let watcher: FSWatcher | undefined;
      const schedulePoll = (): void => {
        poll = clock.setTimer(() => {
          requestRead();
          schedulePoll();
        }, pollIntervalMs);
      };

      if (options.watch !== false) {
        const name = basename(file);
        try {
          watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
            // Other names matter too: a ConfigMap mount swaps a `..data` link, not the file.
            if (changed !== null && changed.toString() !== name && !changed.toString().startsWith('..')) return;
            scheduleRead();
          });
          watcher.on('error', (error) => {
            log.warn({ file, error: error.message }, 'mesh config watch failed, relying on the periodic re-read');
            watcher?.close();
            watcher = undefined;
          });
        } catch (error) {
          // No folder is the usual case of a daemon without a mesh config file: defaults apply.
          const level = errorCode(error) === 'ENOENT' ? 'debug' : 'warn';
          log[level]({ file, error: errorMessage(error) }, 'mesh config watch failed, relying on the periodic re-read');
        }
      }
      schedulePoll();
      // Catch an edit made between construction and start.
      requestRead();
      await untilAborted(signal);
      stopped = true;
      debounce?.cancel();
      poll?.cancel();
      watcher?.close();
      await reading;
    },
  };
}
