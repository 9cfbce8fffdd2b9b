/** What the parse pool and its workers say to each other (kept apart: a worker loads this, not the pool). */
import type { CheckedConfigFile } from './config-file-checker.js';
import type { Transferred } from './json-transfer.js';

export interface FileText {
  readonly path: string;
  readonly text: string;
}

/**
 * A chunk for a worker. `claims` holds one slot per chunk of the batch, shared by every thread:
 * whichever thread sets the chunk's slot first parses it, so the calling thread can take back a
 * chunk still waiting in a worker's queue when it has nothing left.
 */
export interface ParseJob {
  readonly id: number;
  readonly files: readonly FileText[];
  readonly claims: Int32Array;
  readonly chunk: number;
}

/** What the worker answers: per file, JSON text where that is exact (`json-transfer.ts`); null when the chunk was claimed before. */
export interface ParseAnswer {
  readonly id: number;
  readonly results: readonly Transferred<CheckedConfigFile>[] | null;
}

/** Takes chunk `chunk` for the calling thread; false when another thread has it. */
export function claimChunk(claims: Int32Array, chunk: number): boolean {
  return Atomics.compareExchange(claims, chunk, 0, 1) === 0;
}
