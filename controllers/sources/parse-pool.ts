import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { MeshError, newRealClock, type Clock, type TimerHandle } from '../../runtime/index.js';
import { checkConfigFile, type CheckedConfigFile } from './config-file-checker.js';
import { fromTransfer } from './json-transfer.js';
import { claimChunk, type FileText, type ParseAnswer, type ParseJob } from './parse-job.js';

export type { FileText } from './parse-job.js';

/** Parses and checks config files (`checkConfigFile`), spread over worker threads when there are enough of them to pay for it. */
export interface ParsePool {
  parse(files: readonly FileText[]): Promise<CheckedConfigFile[]>;
  /**
   * Starts the workers now, ahead of a batch of about `bytes` of text, so that it does not wait for
   * them (nothing happens when that batch would be parsed on the calling thread).
   */
  prestart(bytes: number): void;
  /** Ends the workers (they are started again if `parse` is called after). */
  close(): Promise<void>;
  /** Worker threads running now (0 when every parse happens on the calling thread). */
  threads(): number;
}

export interface ParsePoolOptions {
  /** Threads that parse a large batch, the calling one included: `threads - 1` workers; 1 or fewer parses on the calling thread alone. */
  readonly threads: number;
  /** Below this much text a batch is parsed on the calling thread: a worker's round trip would cost more. */
  readonly minParallelBytes?: number;
  /** More cluster-scoped kinds, as the folder source normalizes with them. */
  readonly clusterScopedKinds?: ReadonlySet<string>;
  /** Workers with nothing to do for this long are ended (default 10 s); the next large batch starts them again. */
  readonly idleMs?: number;
  readonly clock?: Clock;
}

const DEFAULT_MIN_PARALLEL_BYTES = 256 * 1024;
const DEFAULT_IDLE_MS = 10_000;
/** Chunks per parsing thread in a large batch: enough to even out threads that run at different speeds. */
const CHUNKS_PER_THREAD = 16;

interface Pending {
  /** `undefined`: the chunk was claimed by another thread before the worker came to it. */
  resolve(results: CheckedConfigFile[] | undefined): void;
  reject(error: Error): void;
}

/**
 * A folder's first scan (thousands of policies) is parsed and checked on every core: the calling
 * thread and `threads - 1` workers. The calling thread takes its share rather than wait: a worker
 * is a V8 isolate of its own, which compiles the parser and the schemas again (most of a cold
 * worker's CPU; bench/README.md, config loading) and throws that away when it ends, while the calling thread's compiled code serves every later scan. The files are
 * split in chunks of about equal size, each thread taking the next as it finishes one, and put
 * back in order. The worker script is the compiled `parse-worker.js` beside this module; where
 * there is none (the sources run uncompiled, in tests) every batch is handled on the calling
 * thread alone, by the same function.
 *
 * Workers hold the process only while they have a job; idle for `idleMs` they end, so a daemon
 * whose folder has settled does not keep their memory.
 */
export function newParsePool(options: ParsePoolOptions): ParsePool {
  const script = new URL('./parse-worker.js', import.meta.url);
  const usable = options.threads > 1 && existsSync(fileURLToPath(script));
  const minBytes = options.minParallelBytes ?? DEFAULT_MIN_PARALLEL_BYTES;
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const clock = options.clock ?? newRealClock();
  const clusterScoped = options.clusterScopedKinds;
  let workers: Worker[] = [];
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let idleTimer: TimerHandle | undefined;

  const failPending = (error: Error): void => {
    for (const [id, job] of pending) {
      job.reject(error);
      pending.delete(id);
    }
  };

  const end = (): Promise<unknown> => {
    idleTimer?.cancel();
    idleTimer = undefined;
    const ending = workers;
    workers = [];
    failPending(new MeshError('parse-pool-closed', 'the parse pool was closed while files were being parsed'));
    return Promise.all(ending.map((worker) => worker.terminate()));
  };

  /** While jobs run the workers hold the process; once none is left the idle clock starts. */
  const settle = (): void => {
    idleTimer?.cancel();
    idleTimer = undefined;
    for (const worker of workers) {
      if (pending.size > 0) worker.ref();
      else worker.unref();
    }
    if (pending.size === 0 && workers.length > 0) idleTimer = clock.setTimer(() => void end(), idleMs);
  };

  const start = (): Worker[] => {
    if (workers.length > 0) return workers;
    workers = Array.from({ length: options.threads - 1 }, () => {
      const worker = new Worker(script, { workerData: { clusterScopedKinds: [...(clusterScoped ?? [])] } });
      worker.on('message', (answer: ParseAnswer) => {
        const job = pending.get(answer.id);
        pending.delete(answer.id);
        job?.resolve(answer.results?.map(fromTransfer));
        settle();
      });
      worker.on('error', (error) => {
        failPending(error);
        void end();
      });
      return worker;
    });
    settle();
    return workers;
  };

  const inline = (files: readonly FileText[]): CheckedConfigFile[] => files.map((file) => checkConfigFile(file.path, file.text, clusterScoped));

  const onWorker = (worker: Worker, files: readonly FileText[], claims: Int32Array, chunk: number): Promise<CheckedConfigFile[] | undefined> =>
    new Promise((resolve, reject) => {
      if (!workers.includes(worker)) {
        reject(new MeshError('parse-pool-closed', 'the parse pool was closed while files were being parsed'));
        return;
      }
      const id = nextId++;
      pending.set(id, { resolve, reject });
      const job: ParseJob = { id, files, claims, chunk };
      worker.postMessage(job);
      settle();
    });

  return {
    async parse(files) {
      const bytes = files.reduce((sum, file) => sum + file.text.length, 0);
      if (!usable || files.length < 2 || bytes < minBytes) return inline(files);
      const pool = start();
      const chunks = splitBySize(files, (pool.length + 1) * CHUNKS_PER_THREAD);
      const claims = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * chunks.length));
      const results = new Array<CheckedConfigFile>(files.length);
      const sent: number[] = [];
      let next = 0;
      const filesOf = (chunk: number): FileText[] => files.slice(chunks[chunk]?.from, chunks[chunk]?.to);
      const keep = (chunk: number, parsed: readonly CheckedConfigFile[]): void => {
        const from = chunks[chunk]?.from ?? 0;
        parsed.forEach((result, i) => (results[from + i] = result));
      };
      // Each worker takes the next chunk as it finishes one (a worker slowed by other work takes
      // fewer), with a second one queued so that it never waits for this thread.
      const lane = async (worker: Worker): Promise<void> => {
        for (let chunk = next++; chunk < chunks.length; chunk = next++) {
          sent.push(chunk);
          // A worker that fails (out of memory, a crash) costs time, not the scan: the chunk is done here.
          const parsed = await onWorker(worker, filesOf(chunk), claims, chunk).catch(() => inline(filesOf(chunk)));
          if (parsed) keep(chunk, parsed);
        }
      };
      // This thread's lane: a chunk, then a turn of the event loop, where the workers' answers
      // are read and their next chunks sent; at the end, the chunks still queued at a worker.
      const takeHere = (): number | undefined => {
        if (next >= chunks.length) return sent.find((queued) => claimChunk(claims, queued));
        const chunk = next++;
        claimChunk(claims, chunk);
        return chunk;
      };
      const here = async (): Promise<void> => {
        for (let chunk = takeHere(); chunk !== undefined; chunk = takeHere()) {
          keep(chunk, inline(filesOf(chunk)));
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      };
      await Promise.all([...pool.flatMap((worker) => [lane(worker), lane(worker)]), here()]);
      return results;
    },
    prestart(bytes) {
      if (usable && bytes >= minBytes) start();
    },
    threads: () => workers.length,
    async close() {
      await end();
    },
  };
}

/** Up to `count` runs of consecutive files of about equal text size, as index ranges. */
function splitBySize(files: readonly FileText[], count: number): { from: number; to: number }[] {
  const total = files.reduce((sum, file) => sum + file.text.length, 0);
  const target = total / count;
  const chunks: { from: number; to: number }[] = [];
  let from = 0;
  let bytes = 0;
  files.forEach((file, i) => {
    bytes += file.text.length;
    if (bytes >= target || i === files.length - 1) {
      chunks.push({ from, to: i + 1 });
      from = i + 1;
      bytes = 0;
    }
  });
  return chunks;
}
