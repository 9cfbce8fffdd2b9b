import { describe, expect, test } from '@jest/globals';
import { MeshError } from './errors.js';
import type { LeaderElector } from './leader-election.js';
import { newNopLogger } from './log/logger.js';
import { newManager, type Manager } from './manager.js';
import type { Runnable, RunnableGroup } from './runnable.js';
import { waitFor } from '../testing/wait-for.js';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface TestRunnableOptions {
  group?: RunnableGroup;
  leader?: boolean;
  /** Resolved by the test to make the runnable ready (waitForReady). */
  ready?: Deferred;
  /** Makes it a syncing source (waitForSync) resolved by the test. */
  sync?: Deferred;
  /** Keeps running after the signal aborts. */
  ignoreSignal?: boolean;
}

/** A runnable that records `start:name` and `stop:name` in the shared log. */
function recorded(name: string, events: string[], options: TestRunnableOptions = {}): Runnable {
  const runnable: Runnable & { waitForSync?: (signal?: AbortSignal) => Promise<void> } = {
    name,
    ...(options.group ? { group: options.group } : {}),
    ...(options.leader !== undefined ? { needLeaderElection: () => options.leader === true } : {}),
    async start(signal) {
      events.push(`start:${name}`);
      if (options.ignoreSignal) {
        await new Promise(() => undefined);
      }
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      // A real runnable cleans up asynchronously.
      await new Promise((resolve) => setImmediate(resolve));
      events.push(`stop:${name}`);
    },
  };
  if (options.ready) {
    const ready = options.ready;
    runnable.waitForReady = () => ready.promise;
  }
  if (options.sync) {
    const sync = options.sync;
    runnable.waitForSync = () => sync.promise;
  }
  return runnable;
}

/** A leader elector driven by the test: grant() makes it lead, lose() ends the leadership. */
function fakeElector(events: string[]): LeaderElector & { grant(): void; lose(): void } {
  const started = new Set<() => void>();
  const stopped = new Set<() => void>();
  let leading = false;
  let finish: () => void = () => undefined;
  return {
    identity: 'fake',
    async run(signal) {
      events.push('elector:run');
      await new Promise<void>((resolve) => {
        finish = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      if (leading) {
        leading = false;
        events.push('elector:released');
        for (const listener of stopped) listener();
      }
    },
    isLeader: () => leading,
    getLeader: () => (leading ? 'fake' : ''),
    onStartedLeading(listener) {
      started.add(listener);
      return () => started.delete(listener);
    },
    onStoppedLeading(listener) {
      stopped.add(listener);
      return () => stopped.delete(listener);
    },
    grant() {
      leading = true;
      for (const listener of started) listener();
    },
    lose() {
      finish();
    },
  };
}

function startManager(manager: Manager): { abort: AbortController; result: Promise<unknown>; settled: () => boolean } {
  const abort = new AbortController();
  let done = false;
  const result = manager.start(abort.signal).then(
    () => {
      done = true;
      return undefined;
    },
    (error: unknown) => {
      done = true;
      return error;
    },
  );
  return { abort, result, settled: () => done };
}

const log = newNopLogger('manager');

describe('manager start order', () => {
  test('servers → webhooks → caches (synced) → default → leader-elected, each group awaited', async () => {
    const events: string[] = [];
    const serverReady = deferred();
    const webhookReady = deferred();
    const cacheSync = deferred();
    const manager = newManager({ log });
    // Added out of order on purpose: the manager owns the order.
    manager.add(recorded('leader-ctl', events, { leader: true }));
    manager.add(recorded('worker', events));
    manager.add(recorded('pods', events, { sync: cacheSync }));
    manager.add(recorded('webhook', events, { group: 'webhook', ready: webhookReady }));
    manager.add(recorded('monitoring', events, { group: 'httpServer', ready: serverReady }));
    const run = startManager(manager);
    try {
      await waitFor(() => events.includes('start:monitoring'), { description: 'server started' });
      expect(events).toEqual(['start:monitoring']);
      serverReady.resolve();
      await waitFor(() => events.includes('start:webhook'), { description: 'webhook started' });
      expect(events).toEqual(['start:monitoring', 'start:webhook']);
      webhookReady.resolve();
      await waitFor(() => events.includes('start:pods'), { description: 'cache started' });
      await new Promise((resolve) => setImmediate(resolve));
      expect(events).toEqual(['start:monitoring', 'start:webhook', 'start:pods']);
      expect((await manager.health.check('readiness')).healthy).toBe(false);

      cacheSync.resolve();
      await waitFor(() => events.includes('start:leader-ctl'), { description: 'leader-elected runnable started' });
      expect(events).toEqual(['start:monitoring', 'start:webhook', 'start:pods', 'start:worker', 'start:leader-ctl']);
      expect(await manager.health.check('readiness')).toEqual({ healthy: true, failures: [] });
      expect(manager.isLeader()).toBe(true);
    } finally {
      serverReady.resolve();
      webhookReady.resolve();
      cacheSync.resolve();
      run.abort.abort();
      expect(await run.result).toBeUndefined();
    }
  });

  test('shutdown runs in reverse order, releasing leadership once leader-elected work stopped', async () => {
    const events: string[] = [];
    const elector = fakeElector(events);
    const manager = newManager({ log, leaderElector: elector });
    manager.add(recorded('monitoring', events, { group: 'httpServer' }));
    manager.add(recorded('webhook', events, { group: 'webhook' }));
    manager.add(recorded('pods', events, { group: 'cache' }));
    manager.add(recorded('worker', events, { leader: false }));
    manager.add(recorded('leader-ctl', events, { leader: true }));
    const run = startManager(manager);
    await waitFor(() => events.includes('elector:run'), { description: 'elector running' });
    elector.grant();
    await waitFor(() => events.includes('start:leader-ctl'), { description: 'leader-elected runnable started' });

    events.length = 0;
    run.abort.abort();
    expect(await run.result).toBeUndefined();
    expect(events).toEqual(['stop:leader-ctl', 'elector:released', 'stop:worker', 'stop:pods', 'stop:webhook', 'stop:monitoring']);
    expect(manager.isLeader()).toBe(false);
  });

  test('readiness fails while shutting down', async () => {
    const events: string[] = [];
    const slowStop = deferred();
    const manager = newManager({ log });
    manager.add({
      name: 'slow',
      async start(signal) {
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        await slowStop.promise;
      },
    });
    manager.add(recorded('worker', events));
    const run = startManager(manager);
    await waitFor(() => events.includes('start:worker'), { description: 'started' });
    expect((await manager.health.check('readiness')).healthy).toBe(true);
    run.abort.abort();
    await waitFor(() => events.includes('stop:worker'), { description: 'stopping' });
    expect(await manager.health.check('readiness')).toEqual({
      healthy: false,
      failures: [{ name: 'manager', reason: 'manager is shutting down' }],
    });
    slowStop.resolve();
    expect(await run.result).toBeUndefined();
  });

  test('a runnable added after start joins its running group at once', async () => {
    const events: string[] = [];
    const manager = newManager({ log });
    manager.add(recorded('first', events));
    const run = startManager(manager);
    await waitFor(() => events.includes('start:first'), { description: 'first started' });
    const late = recorded('late', events);
    manager.add(late);
    manager.add(late);
    await waitFor(() => events.includes('start:late'), { description: 'late started' });
    run.abort.abort();
    expect(await run.result).toBeUndefined();
    expect(events.filter((e) => e === 'start:late')).toHaveLength(1);
  });

  test('start twice is refused', async () => {
    const manager = newManager({ log });
    const run = startManager(manager);
    await expect(manager.start(new AbortController().signal)).rejects.toThrow(MeshError);
    run.abort.abort();
    await run.result;
  });
});

describe('manager with leader election', () => {
  test('leader-elected runnables start only after leadership is acquired; the others at once', async () => {
    const events: string[] = [];
    const elector = fakeElector(events);
    const manager = newManager({ log, leaderElector: elector });
    manager.add(recorded('leader-ctl', events, { leader: true }));
    manager.add(recorded('worker', events, { leader: false }));
    const run = startManager(manager);
    try {
      await waitFor(() => events.includes('elector:run'), { description: 'elector running' });
      await new Promise((resolve) => setImmediate(resolve));
      expect(events).toEqual(['start:worker', 'elector:run']);
      expect(manager.isLeader()).toBe(false);
      expect((await manager.health.check('readiness')).healthy).toBe(true);

      elector.grant();
      await waitFor(() => events.includes('start:leader-ctl'), { description: 'leader-elected runnable started' });
      expect(manager.isLeader()).toBe(true);
    } finally {
      run.abort.abort();
      expect(await run.result).toBeUndefined();
    }
  });

  test('losing leadership stops the manager with leader-election-lost', async () => {
    const events: string[] = [];
    const elector = fakeElector(events);
    const manager = newManager({ log, leaderElector: elector });
    manager.add(recorded('leader-ctl', events, { leader: true }));
    manager.add(recorded('worker', events));
    const run = startManager(manager);
    await waitFor(() => events.includes('elector:run'), { description: 'elector running' });
    elector.grant();
    await waitFor(() => events.includes('start:leader-ctl'), { description: 'leading' });
    elector.lose();
    const error = await run.result;
    expect(error).toBeInstanceOf(MeshError);
    expect((error as MeshError).code).toBe('leader-election-lost');
    expect(events).toEqual(expect.arrayContaining(['stop:leader-ctl', 'stop:worker']));
  });
});

describe('manager with leader election that campaigns again (leadershipLoss: recampaign)', () => {
  test('a lost lease stops only the leader-elected runnables; the rest keeps running, and a new term starts them again', async () => {
    const events: string[] = [];
    const elector = fakeElector(events);
    const manager = newManager({ log, leaderElector: elector, leadershipLoss: 'recampaign' });
    manager.add(recorded('leader-ctl', events, { leader: true }));
    manager.add(recorded('worker', events));
    const run = startManager(manager);
    try {
      await waitFor(() => events.includes('elector:run'), { description: 'elector running' });
      elector.grant();
      await waitFor(() => events.includes('start:leader-ctl'), { description: 'leading' });
      elector.lose();
      await waitFor(() => events.includes('stop:leader-ctl'), { description: 'the leader-elected runnable stopped' });
      await waitFor(() => events.filter((event) => event === 'elector:run').length === 2, { description: 'a second campaign' });
      expect(manager.isLeader()).toBe(false);
      expect(run.settled()).toBe(false);
      expect(events).not.toContain('stop:worker');
      expect((await manager.health.check('readiness')).healthy).toBe(true);

      elector.grant();
      await waitFor(() => events.filter((event) => event === 'start:leader-ctl').length === 2, { description: 'the leader-elected runnable started again' });
      expect(manager.isLeader()).toBe(true);
    } finally {
      run.abort.abort();
      expect(await run.result).toBeUndefined();
    }
    expect(events.filter((event) => event === 'stop:leader-ctl')).toHaveLength(2);
    expect(events).toContain('stop:worker');
  });
});

describe('manager shutdown on failure and timeout', () => {
  test('a failing runnable stops the rest, and start rejects with its error', async () => {
    const events: string[] = [];
    const boom = new MeshError('listen-failed', 'cannot listen');
    const fail = deferred();
    const manager = newManager({ log });
    manager.add(recorded('monitoring', events, { group: 'httpServer' }));
    manager.add(recorded('pods', events, { group: 'cache' }));
    manager.add(recorded('leader-ctl', events, { leader: true }));
    manager.add({
      name: 'crashy',
      async start() {
        events.push('start:crashy');
        await fail.promise;
      },
    });
    const run = startManager(manager);
    await waitFor(() => events.includes('start:leader-ctl') && events.includes('start:crashy'), { description: 'all started' });
    fail.reject(boom);
    expect(await run.result).toBe(boom);
    expect(events.slice(-3)).toEqual(['stop:leader-ctl', 'stop:pods', 'stop:monitoring']);
    expect(run.abort.signal.aborted).toBe(false);
  });

  test('a server that cannot become ready stops the start sequence', async () => {
    const events: string[] = [];
    const ready = deferred();
    const manager = newManager({ log });
    manager.add(recorded('monitoring', events, { group: 'httpServer', ready }));
    manager.add(recorded('worker', events));
    const run = startManager(manager);
    await waitFor(() => events.includes('start:monitoring'), { description: 'server started' });
    const error = new MeshError('listen-failed', 'address in use');
    ready.reject(error);
    expect(await run.result).toBe(error);
    expect(events).toEqual(['start:monitoring', 'stop:monitoring']);
  });

  test('a runnable that ignores the signal makes start reject with shutdown-timeout after the duration', async () => {
    const events: string[] = [];
    const shutdownDurationMs = 300;
    const manager = newManager({ log, shutdownDurationMs });
    manager.add(recorded('monitoring', events, { group: 'httpServer' }));
    manager.add(recorded('stubborn', events, { ignoreSignal: true }));
    manager.add(recorded('worker', events));
    const run = startManager(manager);
    await waitFor(() => events.includes('start:worker') && events.includes('start:stubborn'), { description: 'started' });
    const stoppedAt = Date.now();
    run.abort.abort();
    const error = await run.result;
    const elapsed = Date.now() - stoppedAt;
    expect(error).toBeInstanceOf(MeshError);
    expect((error as MeshError).code).toBe('shutdown-timeout');
    expect((error as MeshError).message).toContain('stubborn');
    expect((error as MeshError).message).not.toContain('worker');
    expect((error as MeshError).message).not.toContain('monitoring');
    expect(elapsed).toBeGreaterThanOrEqual(shutdownDurationMs - 5);
    expect(elapsed).toBeLessThan(shutdownDurationMs + 700);
    // Groups not yet reached when time ran out are told to stop as well.
    await waitFor(() => events.includes('stop:monitoring'), { description: 'server stopped' });
  });

  test('an abort before start stops at once without starting anything', async () => {
    const events: string[] = [];
    const manager = newManager({ log });
    manager.add(recorded('worker', events));
    const abort = new AbortController();
    abort.abort();
    await manager.start(abort.signal);
    expect(events).toEqual([]);
  });
});
