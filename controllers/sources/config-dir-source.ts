import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, sep } from 'node:path';
import type { ResourceCheck } from '../../crds/index.js';
import { listConfigFiles } from './config-dir-walk.js';
import type { CheckedConfigFile, CheckedDocument } from './config-file-checker.js';
import { newParsePool, type ParsePool } from './parse-pool.js';
import type { ConfigFileProblem } from './config-file-problem.js';
import { newConfigKindSource, type ConfigKindSource } from './config-kind-source.js';
import { newConfigObjectIndex } from './config-object-index.js';
import { resolveConfigObjects, type NormalizedCache } from './config-object-resolver.js';
import { groupKindOf } from './group-kind.js';
import { MeshError, newRealClock, errorMessage, untilAborted } from '../../runtime/index.js';
import type { Clock, KubeObject, Logger, Runnable, Source, TimerHandle } from '../../runtime/index.js';
import { newSyncLatch } from './sync-latch.js';

export interface ConfigDirSourceOptions {
  /** The folder (`--configDir`). */
  dir: string;
  log: Logger;
  clock?: Clock;
  /** Wait after a file-system event before rescanning, so a burst of writes costs one scan. Default 100 ms. */
  debounceMs?: number;
  /** Period of the full rescan that catches anything the watcher missed. Default 5 s. */
  rescanIntervalMs?: number;
  /** Whether to use `fs.watch`. Default true; false leaves the periodic rescan alone. */
  watch?: boolean;
  /** More cluster-scoped kinds (`Kind.group`) besides the built-in ones, whose objects get no namespace. */
  clusterScopedKinds?: Iterable<string>;
  /** Called once for each new problem (a file turning bad, a new conflict): wire an error counter here. */
  onProblem?: (problem: ConfigFileProblem) => void;
  /**
   * Threads that parse and check a large scan (the first one), the event loop's included: default
   * one per core. The workers among them are started with the source when the folder is large
   * enough, so that the first scan does not wait for them, and end when idle.
   */
  parseThreads?: number;
  /** How long the parse workers may stay idle before they end (default 10 s). */
  parseWorkersIdleMs?: number;
  /** The parse pool to use instead (tests); `parseThreads` and `parseWorkersIdleMs` are then ignored. The source closes it when it stops. */
  parsePool?: ParsePool;
}

/**
 * The config folder as a set of per-kind sources that the rest of the daemon cannot tell from
 * the Kubernetes informer sources, all fed by one watcher.
 */
export interface ConfigDirSource {
  /**
   * The source of one kind (the same object for the same group and kind; the version in
   * `apiVersion` only selects the group, objects are served as their files write them).
   * Starting it, as the controller builder does, keeps the shared watcher running.
   */
  sourceFor(apiVersion: string, kind: string): Source<KubeObject>;
  /** The shared watcher (group `cache`): add it to the manager once, whatever sources are used. */
  readonly runnable: Runnable;
  /** The current problems, sorted by path and position, for debug endpoints. */
  describeProblems(): ConfigFileProblem[];
  /** Resolves once the first scan has been stored. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  isSynced(): boolean;
  /**
   * For a mesh-kind object this source serves: its validation without the checks that need the
   * cluster, done while the folder was parsed (on the parse threads for a large scan). What
   * `checkResource` gives for that object; `completeValidation` finishes it.
   */
  checkOf(object: KubeObject): ResourceCheck | undefined;
}

interface FileState {
  /** Empty forces a read at the next scan. */
  signature: string;
  /** Modified so recently that a later write could keep the same signature: read again next scan. */
  racy: boolean;
  hash: string;
  /** The last good documents: kept while the file has a syntax or read error. */
  documents: readonly CheckedDocument[];
  problems: ConfigFileProblem[];
  /** Read empty once while it had objects: a writer may have truncated it and not written yet. */
  emptyOnce?: boolean;
}

/** Coarse file-system timestamps can hide a same-size rewrite within this window (as git's "racy" entries). */
const RACY_WINDOW_MS = 2_000;

const PROBLEM_MESSAGES: Record<ConfigFileProblem['reason'], string> = {
  syntax: 'config file is malformed, keeping its last good objects',
  read: 'config file cannot be read, keeping its last good objects',
  document: 'config document ignored',
  conflict: 'config object defined twice, first definition wins',
};

/**
 * Watches `--configDir`: every `.yaml`, `.yml` and `.json` file in it and its sub-folders.
 *
 * Change detection: `fs.watch` with `recursive` (native inotify-based on Linux since Node 20)
 * only *triggers* a debounced scan; the scan itself compares each file's stat signature (inode,
 * size, ns mtime and ctime) and re-reads a file when the signature changed, an event named it,
 * or it was modified within the last 2 s (a same-size rewrite within one coarse timestamp tick
 * keeps the signature). A file that turns up empty while it had objects is read again after the
 * debounce before its objects go (a truncate-then-write seen half way). A full rescan runs every `rescanIntervalMs` too, so a missed event, an
 * inotify limit or an unsupported file system only delays a change, never loses it. Scans are
 * serialized and diff the whole folder, so each change yields exactly one event.
 *
 * Bad input never drops good config: a file with a syntax error (or unreadable) keeps serving
 * its last good objects until it is fixed or removed; a document that parses but is not an
 * object with apiVersion, kind and metadata.name is dropped alone (its key cannot be known,
 * so an object it used to define is deleted), the file's other documents are served. The same
 * key defined twice: the first file in sorted path order (then the first document) wins and the
 * later one is reported. Every new problem is logged with path, line and column and passed to
 * `onProblem`.
 *
 * Lifecycle: the watcher runs while at least one holder runs: `runnable`, or any per-kind
 * source the manager started; it stops when the last one stops and cannot be restarted.
 */
export function newConfigDirSource(options: ConfigDirSourceOptions): ConfigDirSource {
  const { dir, log } = options;
  const clock = options.clock ?? newRealClock();
  const debounceMs = options.debounceMs ?? 100;
  const rescanIntervalMs = options.rescanIntervalMs ?? 5_000;
  const clusterScoped = new Set(options.clusterScopedKinds ?? []);
  const index = newConfigObjectIndex(clock);
  const sync = newSyncLatch();
  const sources = new Map<string, ConfigKindSource>();
  const files = new Map<string, FileState>();
  let problems = new Map<string, ConfigFileProblem>();
  let dirty = new Set<string>();
  let allDirty = false;

  // ---- scanning ------------------------------------------------------------------------------

  const parsePool =
    options.parsePool ??
    newParsePool({
      threads: options.parseThreads ?? availableParallelism(),
      clusterScopedKinds: clusterScoped,
      clock,
      ...(options.parseWorkersIdleMs !== undefined ? { idleMs: options.parseWorkersIdleMs } : {}),
    });
  // A folder large enough for the parse threads gets them now rather than at its first scan: the
  // daemon starts its servers and CA meanwhile, and the threads warm up.
  void listConfigFiles(dir).then(
    (listing) => {
      if (!stopped) parsePool.prestart(listing.files.reduce((sum, file) => sum + file.size, 0));
    },
    () => undefined,
  );
  const normalizedCache: NormalizedCache = new WeakMap();
  let lastUnreadable = '[]';
  let folderFailed = false;

  /** Brings `files` up to date; `changed` is false when no file's documents or problems can differ. */
  const readChanged = async (): Promise<{ unreadable: { path: string; message: string }[]; followUp: boolean; changed: boolean }> => {
    let followUp = false;
    let changed = false;
    const listing = await listConfigFiles(dir);
    const readAll = allDirty;
    const named = dirty;
    allDirty = false;
    dirty = new Set();
    const scanStartedAt = Date.now();
    const present = new Set<string>();
    const toParse: { path: string; text: string; signature: string; racy: boolean; hash: string; previous: FileState | undefined }[] = [];
    for (const entry of listing.files) {
      present.add(entry.path);
      const previous = files.get(entry.path);
      const mustRead = !previous || previous.signature !== entry.signature || previous.racy || readAll || named.has(entry.path);
      if (!mustRead) continue;
      let text: string;
      try {
        text = await readFile(entry.path, 'utf8');
      } catch (error) {
        if ((error as { code?: unknown }).code === 'ENOENT') {
          present.delete(entry.path);
          continue;
        }
        changed = true;
        files.set(entry.path, {
          signature: '',
          racy: false,
          hash: previous?.hash ?? '',
          documents: previous?.documents ?? [],
          problems: [{ path: entry.path, line: 1, column: 1, reason: 'read', message: errorMessage(error) }],
        });
        continue;
      }
      if (text.length === 0 && previous && previous.documents.length > 0 && !previous.emptyOnce) {
        // `O_TRUNC` then write (a shell redirect, many tools) shows an empty file for a moment:
        // keep serving until a second look after the debounce confirms it.
        files.set(entry.path, { ...previous, signature: '', emptyOnce: true });
        followUp = true;
        continue;
      }
      const hash = createHash('sha256').update(text).digest('hex');
      const racy = scanStartedAt - entry.mtimeMs < RACY_WINDOW_MS;
      if (previous && previous.hash === hash && previous.signature !== '') {
        files.set(entry.path, { ...previous, signature: entry.signature, racy });
        continue;
      }
      toParse.push({ path: entry.path, text, signature: entry.signature, racy, hash, previous });
    }
    // Parsed together: a first scan of many files is spread over the worker threads.
    const parsedFiles = await parsePool.parse(toParse);
    toParse.forEach((file, i) => {
      const parsed = parsedFiles[i] as CheckedConfigFile;
      changed = true;
      files.set(file.path, {
        signature: file.signature,
        racy: file.racy,
        hash: file.hash,
        documents: parsed.parsed ? parsed.documents : (file.previous?.documents ?? []),
        problems: parsed.problems,
      });
    });
    const isUnreadable = (path: string): boolean => listing.unreadable.some((bad) => path === bad.path || path.startsWith(bad.path + sep));
    for (const path of [...files.keys()]) {
      if (!present.has(path) && !isUnreadable(path)) {
        files.delete(path);
        changed = true;
      }
    }
    const unreadable = JSON.stringify(listing.unreadable.map((bad) => [bad.path, bad.message]).sort());
    if (unreadable !== lastUnreadable) changed = true;
    lastUnreadable = unreadable;
    return { unreadable: listing.unreadable, followUp, changed };
  };

  const publish = (unreadable: readonly { path: string; message: string }[]): void => {
    const ordered = [...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([path, state]) => ({ path, documents: state.documents }));
    const resolved = resolveConfigObjects(ordered, clusterScoped, normalizedCache);
    const events = index.replace(resolved.objects);

    const current: ConfigFileProblem[] = [
      ...unreadable.map((bad): ConfigFileProblem => ({ path: bad.path, line: 1, column: 1, reason: 'read', message: bad.message })),
      ...[...files.values()].flatMap((state) => state.problems),
      ...resolved.conflicts,
    ];
    updateProblems(current);

    let applied = 0;
    let deleted = 0;
    for (const [groupKind, list] of events) {
      for (const event of list) {
        if (event.type === 'apply') applied++;
        else deleted++;
      }
      sources.get(groupKind)?.notify(list);
    }
    if (applied + deleted > 0) log.debug({ dir, applied, deleted }, 'config folder changed');
  };

  const updateProblems = (current: readonly ConfigFileProblem[]): void => {
    const next = new Map<string, ConfigFileProblem>();
    for (const problem of current) {
      const key = [problem.path, problem.line, problem.column, problem.reason, problem.message].join('\0');
      next.set(key, problem);
      if (problems.has(key)) continue;
      const { path, line, column, reason, message } = problem;
      log.error({ path, line, column, reason, error: message }, PROBLEM_MESSAGES[reason]);
      try {
        options.onProblem?.(problem);
      } catch (error) {
        log.error({ error: errorMessage(error) }, 'problem callback failed');
      }
    }
    const stillBad = new Set([...next.values()].map((problem) => problem.path));
    for (const path of new Set([...problems.values()].map((problem) => problem.path))) {
      if (!stillBad.has(path)) log.info({ path }, 'config file problems resolved');
    }
    problems = next;
  };

  const scan = async (): Promise<void> => {
    const { unreadable, followUp, changed } = await readChanged();
    // Unchanged files give the same objects and problems; only a recovery from a folder-level
    // failure has a problem to clear.
    if (changed || !sync.isSynced() || folderFailed) publish(unreadable);
    folderFailed = false;
    if (followUp) scheduleScan();
  };

  // ---- the watcher loop ----------------------------------------------------------------------

  let stopped = false;
  let scanning: Promise<void> | undefined;
  let scanAgain = false;
  let watcher: FSWatcher | undefined;
  let debounceTimer: TimerHandle | undefined;
  let rescanTimer: TimerHandle | undefined;

  const safeScan = async (): Promise<void> => {
    try {
      await scan();
    } catch (error) {
      // The folder itself is gone or unreadable: keep serving what we have. A watch on it would
      // follow the old folder; the periodic rescan opens a new one once it is back.
      folderFailed = true;
      closeWatcher();
      const problem: ConfigFileProblem = { path: dir, line: 1, column: 1, reason: 'read', message: errorMessage(error) };
      updateProblems([...problems.values()].filter((p) => p.path !== dir).concat(problem));
    }
  };

  const requestScan = (): Promise<void> => {
    if (scanning) {
      scanAgain = true;
      return scanning;
    }
    scanning = (async () => {
      do {
        scanAgain = false;
        await safeScan();
      } while (scanAgain && !stopped);
    })().finally(() => (scanning = undefined));
    return scanning;
  };

  const scheduleScan = (): void => {
    if (stopped) return;
    debounceTimer ??= clock.setTimer(() => {
      debounceTimer = undefined;
      void requestScan();
    }, debounceMs);
  };

  const onFsEvent = (filename: string | Buffer | null): void => {
    if (stopped) return;
    if (filename === null) allDirty = true;
    else dirty.add(join(dir, filename.toString()));
    scheduleScan();
  };

  let watchFailureLogged = false;
  const watchFailed = (error: unknown): void => {
    if (watchFailureLogged) return;
    watchFailureLogged = true;
    log.warn({ dir, error: errorMessage(error) }, 'config folder watch failed, relying on the periodic rescan');
  };

  const closeWatcher = (): void => {
    watcher?.close();
    watcher = undefined;
  };

  const openWatcher = (): void => {
    if (options.watch === false || watcher || stopped) return;
    try {
      const opened = watch(dir, { recursive: true, persistent: false }, (_event, filename) => onFsEvent(filename));
      opened.on('error', (error) => {
        watchFailed(error);
        opened.close();
        if (watcher === opened) watcher = undefined;
      });
      watcher = opened;
      watchFailureLogged = false;
    } catch (error) {
      watchFailed(error);
    }
  };

  const scheduleRescan = (): void => {
    rescanTimer = clock.setTimer(() => {
      if (stopped) return;
      openWatcher();
      void requestScan();
      scheduleRescan();
    }, rescanIntervalMs);
  };

  const run = async (stop: AbortSignal): Promise<void> => {
    log.info({ dir }, 'watching config folder');
    try {
      await scan();
    } catch (error) {
      throw new MeshError('config-dir-unreadable', `cannot read config folder "${dir}": ${errorMessage(error)}`, { cause: error });
    }
    sync.markSynced();
    log.info({ dir, files: files.size, problems: problems.size }, 'config folder synced');
    openWatcher();
    scheduleRescan();
    await untilAborted(stop);
  };

  // ---- holders: the runnable and every started per-kind source ---------------------------------

  let loop: { stop: AbortController; done: Promise<void>; failure: Promise<never> } | undefined;
  let holders = 0;

  const shutdown = async (): Promise<void> => {
    stopped = true;
    debounceTimer?.cancel();
    rescanTimer?.cancel();
    closeWatcher();
    await scanning;
    await parsePool.close();
  };

  const startLoop = (): NonNullable<typeof loop> => {
    const stop = new AbortController();
    let fail!: (error: unknown) => void;
    const failure = new Promise<never>((_resolve, reject) => (fail = reject));
    failure.catch(() => undefined);
    const done = run(stop.signal)
      .catch((error: unknown) => fail(error))
      .finally(async () => {
        await shutdown();
        sync.markStopped(new MeshError('stopped-before-sync', `config folder "${dir}": stopped before it synced`));
        log.info({ dir }, 'stopped watching config folder');
      });
    return { stop, done, failure };
  };

  const hold = async (signal: AbortSignal): Promise<void> => {
    if (signal.aborted) return;
    if (stopped) throw new MeshError('already-stopped', `config folder "${dir}": the watcher has stopped and cannot restart`);
    loop ??= startLoop();
    const running = loop;
    holders++;
    try {
      await Promise.race([untilAborted(signal), running.failure]);
    } finally {
      holders--;
      if (holders === 0) {
        stopped = true;
        running.stop.abort();
        await running.done;
      }
    }
  };

  const runnable: Runnable = {
    name: 'config-dir',
    group: 'cache',
    start: hold,
    waitForReady: (signal) => sync.wait(signal),
  };

  return {
    runnable,

    sourceFor(apiVersion: string, kind: string): Source<KubeObject> {
      if (kind === '') throw new MeshError('invalid-kind', 'config folder: sourceFor needs a kind');
      const groupKind = groupKindOf(apiVersion, kind);
      let source = sources.get(groupKind);
      if (!source) {
        source = newConfigKindSource({ name: `config-dir:${groupKind}`, groupKind, index, sync, hold, log });
        sources.set(groupKind, source);
      }
      return source;
    },

    describeProblems(): ConfigFileProblem[] {
      return [...problems.values()]
        .map((problem) => ({ ...problem }))
        .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line || a.column - b.column));
    },

    waitForSync: (signal) => sync.wait(signal),
    isSynced: () => sync.isSynced(),
    checkOf: (object) => index.checkOf(object),
  };
}
