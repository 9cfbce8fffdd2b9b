import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { parseConfigFile, type ParsedConfigFile } from './config-file-parser.js';

export interface FileText {
  readonly path: string;
  readonly text: string;
}

/** Parses config files, spread over worker threads when there are enough of them to pay for it. */
export interface ParsePool {
  parse(files: readonly FileText[]): Promise<ParsedConfigFile[]>;
  /** Ends the workers (they are started again if `parse` is called after). */
  close(): Promise<void>;
  /** Worker threads running now (0 when every parse happens on the calling thread). */
  threads(): number;
}

export interface ParsePoolOptions {
  /** Worker threads; 1 or fewer parses on the calling thread. */
  readonly workers: number;
  /** Below this much text a batch is parsed on the calling thread: a worker's round trip would cost more. */
  readonly minParallelBytes?: number;
}

const DEFAULT_MIN_PARALLEL_BYTES = 256 * 1024;

interface Pending {
  resolve(results: ParsedConfigFile[]): void;
  reject(error: Error): void;
}

/**
 * A folder's first scan (thousands of policies) is parsed on every core: the files are split in
 * as many batches as workers, by size. The parsed documents come back by structured clone. The
 * worker script is the compiled `parse-worker.js` beside this module; where there is none (the
 * sources run uncompiled, in tests) every batch is parsed on the calling thread.
 */
export function newParsePool(options: ParsePoolOptions): ParsePool {
  const script = new URL('./parse-worker.js', import.meta.url);
  const usable = options.workers > 1 && existsSync(fileURLToPath(script));
  const minBytes = options.minParallelBytes ?? DEFAULT_MIN_PARALLEL_BYTES;
  let workers: Worker[] = [];
  const pending = new Map<number, Pending>();
  let nextId = 0;

  const start = (): Worker[] => {
    if (workers.length > 0) return workers;
    workers = Array.from({ length: options.workers }, () => {
      const worker = new Worker(script);
      worker.unref();
      worker.on('message', (answer: { id: number; results: ParsedConfigFile[] }) => {
        pending.get(answer.id)?.resolve(answer.results);
        pending.delete(answer.id);
      });
      worker.on('error', (error) => {
        for (const [id, job] of pending) {
          job.reject(error);
          pending.delete(id);
        }
        workers = [];
      });
      return worker;
    });
    return workers;
  };

  const onWorker = (worker: Worker, files: readonly FileText[]): Promise<ParsedConfigFile[]> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, files });
    });

  return {
    async parse(files) {
      const bytes = files.reduce((sum, file) => sum + file.text.length, 0);
      if (!usable || files.length < 2 || bytes < minBytes) return files.map((file) => parseConfigFile(file.path, file.text));
      const pool = start();
      const batches = splitBySize(files, pool.length);
      const parsed = await Promise.all(batches.map((batch, i) => (batch.files.length === 0 ? Promise.resolve([]) : onWorker(pool[i] as Worker, batch.files))));
      // Back in the callers' order.
      const results = new Array<ParsedConfigFile>(files.length);
      batches.forEach((batch, i) => batch.indexes.forEach((index, j) => (results[index] = (parsed[i] as ParsedConfigFile[])[j] as ParsedConfigFile)));
      return results;
    },
    threads: () => workers.length,
    async close() {
      const ending = workers;
      workers = [];
      await Promise.all(ending.map((worker) => worker.terminate()));
    },
  };
}

/** `count` batches of about equal text size (largest files first, each to the lightest batch). */
function splitBySize(files: readonly FileText[], count: number): { files: FileText[]; indexes: number[] }[] {
  const batches = Array.from({ length: count }, () => ({ files: [] as FileText[], indexes: [] as number[], bytes: 0 }));
  const order = files.map((file, index) => ({ file, index })).sort((a, b) => b.file.text.length - a.file.text.length);
  for (const { file, index } of order) {
    const lightest = batches.reduce((min, batch) => (batch.bytes < min.bytes ? batch : min));
    lightest.files.push(file);
    lightest.indexes.push(index);
    lightest.bytes += file.text.length;
  }
  return batches;
}
