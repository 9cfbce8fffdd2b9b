import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { newRealClock, type Clock, type TimerHandle } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import type { CertificateAuthority, IssuedCertificate } from './certificate-authority.js';
import type { CsrSigner } from './csr-signer.js';
import type { KeyCertBundle } from './key-cert-bundle.js';
import type { SigningAnswer, SigningJobMessage, SigningMessage } from './signing-job.js';

/** Signs workload CSRs with our CA, on worker threads while many arrive. */
export interface SigningPool extends CsrSigner {
  signCsr(csrPem: string, identity: string, ttlMs: number): Promise<IssuedCertificate>;
  /** Signing threads running now, the calling one not counted (0 at rest). */
  threads(): number;
  /** CSRs handed to the signing threads so far (the others were signed on the calling thread). */
  jobsOnThreads(): number;
  /** Ends the threads; later CSRs are signed on the calling thread. */
  close(): Promise<void>;
}

export interface SigningPoolOptions {
  /** The CA, whose material in use each thread follows (a rotation reaches every thread before its next job). */
  readonly ca: CertificateAuthority;
  /** Threads in all, the calling one included: `threads - 1` signing threads; 1 or fewer signs on the calling thread alone. */
  readonly threads: number;
  /** CSRs within one second that start the signing threads (default 8): fewer are signed on the calling thread. */
  readonly startAfter?: number;
  /**
   * Jobs a signing thread holds at most (default 2: one signing, one waiting); when every thread
   * holds that many the calling thread signs the CSR itself.
   */
  readonly jobsPerThread?: number;
  /** Threads with nothing to sign for this long are ended (default 30 s). */
  readonly idleMs?: number;
  readonly clock?: Clock;
}

const DEFAULT_START_AFTER = 8;
const DEFAULT_IDLE_MS = 30_000;
const DEFAULT_JOBS_PER_THREAD = 2;

interface Job {
  readonly message: SigningJobMessage;
  resolve(issued: IssuedCertificate): void;
  reject(error: unknown): void;
}

interface SigningThread {
  readonly worker: Worker;
  online: boolean;
  /** The bundle last sent to it. */
  bundle: KeyCertBundle | undefined;
  readonly jobs: Map<number, Job>;
}

/**
 * The CA's signing on every core. Most of an issuance's CPU is the CSR's key import, its signature
 * verification and the certificate's signature, which a second thread can do while the calling
 * thread serves TLS, HTTP/2 and the callers' tokens. Threads start when CSRs come in numbers (a
 * fleet of agents starting: `startAfter` within a second) and end after `idleMs` without work;
 * until they are up, and at rest (a renewal now and then), the calling thread signs, as it does
 * when there is no compiled worker script (the sources run uncompiled, in tests).
 *
 * The lifetime is resolved on the calling thread, and a job carries it with the calling thread's
 * time, so a certificate is the same whichever thread signs it. The jobs of a thread that fails,
 * exits or is closed are signed again on the calling thread: nothing is lost.
 */
export function newSigningPool(options: SigningPoolOptions): SigningPool {
  const { ca } = options;
  const script = new URL('./signing-worker.js', import.meta.url);
  const usable = options.threads > 1 && existsSync(fileURLToPath(script));
  const startAfter = options.startAfter ?? DEFAULT_START_AFTER;
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const jobsPerThread = options.jobsPerThread ?? DEFAULT_JOBS_PER_THREAD;
  const clock = options.clock ?? newRealClock();
  let threads: SigningThread[] = [];
  let closed = false;
  let nextId = 0;
  let onThreads = 0;
  let windowStartMs = -Infinity;
  let inWindow = 0;
  let idleTimer: TimerHandle | undefined;

  const signInline = (message: SigningJobMessage): IssuedCertificate => ca.signCsr(message.csrPem, message.identity, message.resolvedTtlMs);

  const redoInline = (jobs: Iterable<Job>): void => {
    for (const job of jobs) {
      try {
        job.resolve(signInline(job.message));
      } catch (error) {
        job.reject(error);
      }
    }
  };

  const pendingCount = (): number => threads.reduce((sum, thread) => sum + thread.jobs.size, 0);

  const end = (): Promise<unknown> => {
    idleTimer?.cancel();
    idleTimer = undefined;
    const ending = threads;
    threads = [];
    for (const thread of ending) {
      redoInline(thread.jobs.values());
      thread.jobs.clear();
    }
    return Promise.all(ending.map((thread) => thread.worker.terminate()));
  };

  /** Threads with jobs hold the process; once none has any the idle clock starts. */
  const settle = (): void => {
    idleTimer?.cancel();
    idleTimer = undefined;
    const busy = pendingCount() > 0;
    for (const thread of threads) {
      if (busy) thread.worker.ref();
      else thread.worker.unref();
    }
    if (!busy && threads.length > 0) idleTimer = clock.setTimer(() => void end(), idleMs);
  };

  const lose = (thread: SigningThread): void => {
    if (!threads.includes(thread)) return;
    threads = threads.filter((other) => other !== thread);
    redoInline(thread.jobs.values());
    thread.jobs.clear();
    void thread.worker.terminate();
    settle();
  };

  const start = (): void => {
    threads = Array.from({ length: options.threads - 1 }, () => {
      const thread: SigningThread = { worker: new Worker(script), online: false, bundle: undefined, jobs: new Map() };
      thread.worker.on('online', () => (thread.online = true));
      thread.worker.on('message', (answer: SigningAnswer) => {
        const job = thread.jobs.get(answer.id);
        thread.jobs.delete(answer.id);
        if (job) {
          if ('issued' in answer) job.resolve(answer.issued);
          else job.reject(answer.error.caCode ? new CaError(answer.error.caCode, answer.error.message) : new Error(answer.error.message));
        }
        settle();
      });
      thread.worker.on('error', () => lose(thread));
      thread.worker.on('exit', () => lose(thread));
      return thread;
    });
    settle();
  };

  /** Counts the CSR in the current second; starts the threads when they come in numbers. */
  const noteArrival = (): void => {
    const nowMs = clock.now();
    if (nowMs - windowStartMs >= 1000) {
      windowStartMs = nowMs;
      inWindow = 0;
    }
    inWindow++;
    if (usable && !closed && threads.length === 0 && inWindow >= startAfter) start();
  };

  const leastBusy = (): SigningThread | undefined => {
    let best: SigningThread | undefined;
    for (const thread of threads) {
      if (thread.online && thread.jobs.size < jobsPerThread && (!best || thread.jobs.size < best.jobs.size)) best = thread;
    }
    return best;
  };

  return {
    async signCsr(csrPem, identity, ttlMs) {
      // The lifetime is resolved here, against this CA's settings, and refused before anything is sent.
      const resolvedTtlMs = ca.resolveTtl(ttlMs);
      noteArrival();
      const message: SigningJobMessage = { kind: 'sign', id: nextId++, csrPem, identity, resolvedTtlMs, nowMs: clock.now() };
      const thread = leastBusy();
      if (!thread) return signInline(message);
      const bundle = ca.bundle();
      const outgoing: SigningMessage[] = thread.bundle === bundle ? [message] : [{ kind: 'bundle', material: bundle.material }, message];
      thread.bundle = bundle;
      onThreads++;
      return new Promise<IssuedCertificate>((resolve, reject) => {
        thread.jobs.set(message.id, { message, resolve, reject });
        for (const item of outgoing) thread.worker.postMessage(item);
        settle();
      });
    },
    threads: () => threads.length,
    jobsOnThreads: () => onThreads,
    async close() {
      closed = true;
      await end();
    },
  };
}
