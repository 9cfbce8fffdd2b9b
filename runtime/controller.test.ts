import { describe, expect, test } from '@jest/globals';
import { FakeClock } from './testing/fake-clock.js';
import { newController, type Controller, type ReconcileRequest, type ReconcileResult } from './controller.js';
import { MeshError, TerminalError } from './errors.js';
import type { KubeObject, ObjectKey, Source, SourceHandler } from './source.js';
import { objectKeyOf } from './source.js';
import { newRecordingLogger, type LogEntry } from '../testing/recording-logger.js';
import { waitFor } from '../testing/wait-for.js';

/** An in-memory source: tests push events; the store follows them. */
function memorySource(name = 'memory'): Source<KubeObject> & {
  apply(object: KubeObject): void;
  remove(object: KubeObject): void;
  markSynced(): void;
} {
  const objects = new Map<string, KubeObject>();
  const handlers = new Set<SourceHandler<KubeObject>>();
  let synced = false;
  let onSync: (() => void)[] = [];
  const id = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  return {
    name,
    group: 'cache',
    store: {
      get: (key: ObjectKey) => objects.get(`${key.namespace}/${key.name}`),
      list: () => [...objects.values()],
    },
    subscribe(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    async start(signal) {
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    },
    waitForSync: () => (synced ? Promise.resolve() : new Promise<void>((resolve) => onSync.push(resolve))),
    isSynced: () => synced,
    markSynced() {
      synced = true;
      for (const resolve of onSync) resolve();
      onSync = [];
    },
    apply(object) {
      objects.set(id(object), object);
      for (const handler of handlers) handler({ type: 'apply', object });
    },
    remove(object) {
      objects.delete(id(object));
      for (const handler of handlers) handler({ type: 'delete', object });
    },
  };
}

interface Harness {
  clock: FakeClock;
  controller: Controller;
  calls: ReconcileRequest[];
  callTimes: number[];
  errors: Record<string, string>[];
  logs: LogEntry[];
  stop: () => Promise<void>;
}

type Behaviour = (request: ReconcileRequest, attempt: number) => Promise<ReconcileResult | void>;

async function startController(behaviour: Behaviour, workers = 1, configure?: (c: Controller) => void): Promise<Harness> {
  const clock = new FakeClock();
  const calls: ReconcileRequest[] = [];
  const callTimes: number[] = [];
  const errors: Record<string, string>[] = [];
  const logs: LogEntry[] = [];
  const attempts = new Map<string, number>();
  const controller = newController({
    name: 'widgets',
    workers,
    clock,
    log: newRecordingLogger(logs),
    onError: { syncErrors: { inc: (labels) => errors.push(labels ?? {}) }, labels: { cluster: 'Kubernetes' } },
    reconcile: async (request) => {
      calls.push(request);
      callTimes.push(clock.now());
      const id = `${request.key.namespace}/${request.key.name}`;
      const attempt = attempts.get(id) ?? 0;
      attempts.set(id, attempt + 1);
      return behaviour(request, attempt);
    },
  });
  configure?.(controller);
  const abort = new AbortController();
  const running = controller.start(abort.signal);
  return {
    clock,
    controller,
    calls,
    callTimes,
    errors,
    logs,
    stop: async () => {
      abort.abort();
      await running;
    },
  };
}

const key: ObjectKey = { namespace: 'ns', name: 'a' };

describe('controller reconcile contract', () => {
  test('success forgets the key and reconciles once', async () => {
    const h = await startController(async () => undefined);
    try {
      h.controller.enqueue(key);
      await waitFor(() => h.calls.length === 1, { description: 'first reconcile' });
      await waitFor(() => h.controller.queue.len() === 0, { description: 'queue empty' });
      h.clock.advance(60_000);
      expect(h.calls).toHaveLength(1);
      expect(h.calls[0]?.key).toEqual(key);
      expect(h.controller.queue.numRequeues(key)).toBe(0);
      expect(h.errors).toEqual([]);
    } finally {
      await h.stop();
    }
  });

  test('a thrown error requeues with growing backoff, counted and logged; success then forgets', async () => {
    const h = await startController(async (_request, attempt) => {
      if (attempt < 4) throw new Error('conflict');
    });
    try {
      h.controller.enqueue(key);
      for (let call = 2; call <= 5; call++) {
        await waitFor(() => h.calls.length === call - 1 && h.clock.pendingTimers() === 1, { description: `retry timer ${call}` });
        h.clock.advance(1000);
        await waitFor(() => h.calls.length === call, { description: `reconcile ${call}` });
      }
      await waitFor(() => h.controller.queue.numRequeues(key) === 0, { description: 'forget after success' });
      const first = h.callTimes[0] as number;
      // With 1 s steps on the fake clock, each retry fires at the first step past its backoff.
      expect(h.callTimes.map((t) => t - first)).toEqual([0, 1000, 2000, 3000, 4000]);
      expect(h.errors).toEqual(Array(4).fill({ cluster: 'Kubernetes' }));
      const failures = h.logs.filter((e) => e.message === 'reconcile failed, retrying');
      expect(failures.map((e) => e.fields['requeues'])).toEqual([0, 1, 2, 3]);
      expect(failures.every((e) => e.level === 'error' && e.fields['error'] === 'conflict')).toBe(true);
    } finally {
      await h.stop();
    }
  });

  test('the retry delay is the rate limiter backoff: 5, 10, 20, 40 ms', async () => {
    const h = await startController(async (_request, attempt) => {
      if (attempt < 4) throw new Error('transient');
    });
    try {
      h.controller.enqueue(key);
      const gaps: number[] = [];
      for (let call = 2; call <= 5; call++) {
        await waitFor(() => h.clock.pendingTimers() === 1, { description: `retry timer ${call}` });
        let waited = 0;
        while (h.calls.length < call) {
          h.clock.advance(1);
          waited++;
          await new Promise((resolve) => setImmediate(resolve));
        }
        gaps.push(waited);
      }
      expect(gaps).toEqual([5, 10, 20, 40]);
    } finally {
      await h.stop();
    }
  });

  test.each([
    { name: 'a TerminalError', error: new TerminalError('spec.selector is invalid') },
    { name: 'an error caused by a TerminalError', error: new Error('apply failed', { cause: new TerminalError('bad') }) },
  ])('$name is logged and counted, never retried', async ({ error }) => {
    const h = await startController(async () => {
      throw error;
    });
    try {
      h.controller.enqueue(key);
      await waitFor(() => h.errors.length === 1, { description: 'error counted' });
      await waitFor(() => h.controller.queue.len() === 0, { description: 'queue empty' });
      h.clock.advance(10_000_000);
      await new Promise((resolve) => setImmediate(resolve));
      expect(h.calls).toHaveLength(1);
      expect(h.clock.pendingTimers()).toBe(0);
      expect(h.controller.queue.numRequeues(key)).toBe(0);
      const logged = h.logs.find((e) => e.message === 'reconcile failed, terminal error, not retrying');
      expect(logged?.level).toBe('error');
    } finally {
      await h.stop();
    }
  });

  test('requeueAfterMs reconciles again after exactly that delay, with the failure history cleared', async () => {
    const h = await startController(async (_request, attempt) => {
      if (attempt === 0) throw new Error('once');
      if (attempt === 1) return { requeueAfterMs: 30_000 };
      return undefined;
    });
    try {
      h.controller.enqueue(key);
      await waitFor(() => h.clock.pendingTimers() === 1, { description: 'backoff timer' });
      h.clock.advance(5);
      await waitFor(() => h.calls.length === 2, { description: 'second reconcile' });
      await waitFor(() => h.clock.pendingTimers() === 1, { description: 'requeue-after timer' });
      expect(h.controller.queue.numRequeues(key)).toBe(0);
      h.clock.advance(29_999);
      await new Promise((resolve) => setImmediate(resolve));
      expect(h.calls).toHaveLength(2);
      h.clock.advance(1);
      await waitFor(() => h.calls.length === 3, { description: 'third reconcile' });
      expect((h.callTimes[2] as number) - (h.callTimes[1] as number)).toBe(30_000);
    } finally {
      await h.stop();
    }
  });

  test('each call gets a fresh reconcile id and a logger bound to it', async () => {
    const h = await startController(async (request) => {
      request.log.info({ step: 'inside' }, 'working');
    });
    try {
      h.controller.enqueue(key);
      await waitFor(() => h.calls.length === 1, { description: 'first' });
      h.controller.enqueue({ namespace: '', name: 'cluster-scoped' });
      await waitFor(() => h.calls.length === 2, { description: 'second' });
      const ids = h.calls.map((c) => c.reconcileId);
      expect(new Set(ids).size).toBe(2);
      for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const inside = h.logs.filter((e) => e.message === 'working').map((e) => e.fields);
      expect(inside).toEqual([
        { controller: 'widgets', namespace: 'ns', name: 'a', reconcileId: ids[0], step: 'inside' },
        { controller: 'widgets', namespace: '', name: 'cluster-scoped', reconcileId: ids[1], step: 'inside' },
      ]);
    } finally {
      await h.stop();
    }
  });

  test('never two reconciles of one key at once, even with several workers', async () => {
    let active = 0;
    let maxActive = 0;
    const releases: (() => void)[] = [];
    const h = await startController(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise<void>((resolve) => releases.push(resolve));
      active--;
    }, 4);
    try {
      h.controller.enqueue(key);
      await waitFor(() => releases.length === 1, { description: 'first reconcile running' });
      h.controller.enqueue(key);
      h.controller.enqueue(key);
      h.controller.enqueue({ namespace: 'ns', name: 'b' });
      await waitFor(() => releases.length === 2, { description: 'other key runs in parallel' });
      expect(h.calls.map((c) => c.key.name)).toEqual(['a', 'b']);
      releases[0]?.();
      await waitFor(() => releases.length === 3, { description: 'dirty key re-run after done' });
      expect(h.calls.map((c) => c.key.name)).toEqual(['a', 'b', 'a']);
      releases[1]?.();
      releases[2]?.();
      await waitFor(() => active === 0, { description: 'all done' });
      expect(maxActive).toBe(2);
      expect(h.calls).toHaveLength(3);
    } finally {
      for (const release of releases) release();
      await h.stop();
    }
  });

  test('stop waits for reconciles in flight, which see the aborted signal, and starts no new one', async () => {
    let release: () => void = () => undefined;
    let sawAbort = false;
    const h = await startController(async (request) => {
      await new Promise<void>((resolve) => (release = resolve));
      sawAbort = request.signal.aborted;
      throw new Error('cut short');
    });
    h.controller.enqueue(key);
    await waitFor(() => h.calls.length === 1, { description: 'reconcile running' });
    h.controller.enqueue({ namespace: 'ns', name: 'queued' });
    let stopped = false;
    const stopping = h.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(sawAbort).toBe(true);
    expect(h.calls.map((c) => c.key.name)).toEqual(['a']);
    expect(h.errors).toEqual([]);
  });
});

describe('controller watches', () => {
  test('default mapping: each event reconciles the object by key; the event type is never passed', async () => {
    const source = memorySource();
    source.apply({ metadata: { namespace: 'ns', name: 'existing' } });
    const h = await startController(
      async () => undefined,
      1,
      (c) => c.watches(source),
    );
    try {
      await new Promise((resolve) => setImmediate(resolve));
      expect(h.calls).toHaveLength(0);
      source.markSynced();
      await waitFor(() => h.calls.length === 1, { description: 'existing object reconciled after sync' });
      source.apply({ metadata: { namespace: 'ns', name: 'new' } });
      await waitFor(() => h.calls.length === 2, { description: 'apply reconciled' });
      source.remove({ metadata: { namespace: 'ns', name: 'existing' } });
      await waitFor(() => h.calls.length === 3, { description: 'delete reconciled' });
      expect(h.calls.map((c) => c.key)).toEqual([
        { namespace: 'ns', name: 'existing' },
        { namespace: 'ns', name: 'new' },
        { namespace: 'ns', name: 'existing' },
      ]);
      expect(Object.keys(h.calls[2] as object).sort()).toEqual(['key', 'log', 'reconcileId', 'signal']);
    } finally {
      await h.stop();
    }
  });

  test('a map function fans one object out to the keys that depend on it', async () => {
    const pods = memorySource('pods');
    const owners = memorySource('owners');
    pods.markSynced();
    owners.markSynced();
    const h = await startController(
      async () => undefined,
      1,
      (c) =>
        c
          .watches(pods, (pod) => {
            const owner = pod.metadata?.labels?.['app'];
            return owner ? { namespace: pod.metadata?.namespace ?? '', name: owner } : undefined;
          })
          .watches(owners, (o) => [objectKeyOf(o), { namespace: 'mesh-system', name: 'summary' }]),
    );
    try {
      pods.apply({ metadata: { namespace: 'ns', name: 'pod-1', labels: { app: 'web' } } });
      pods.apply({ metadata: { namespace: 'ns', name: 'pod-2' } });
      await waitFor(() => h.calls.length === 1, { description: 'owner reconciled' });
      owners.apply({ metadata: { namespace: 'ns', name: 'web' } });
      await waitFor(() => h.calls.length === 3, { description: 'fan-out' });
      expect(h.calls.map((c) => `${c.key.namespace}/${c.key.name}`)).toEqual(['ns/web', 'ns/web', 'mesh-system/summary']);
      expect(h.controller.sources().map((s) => s.name)).toEqual(['pods', 'owners']);
    } finally {
      await h.stop();
    }
  });

  test('a failing map function is logged and the event skipped', async () => {
    const source = memorySource();
    source.markSynced();
    const h = await startController(
      async () => undefined,
      1,
      (c) =>
        c.watches(source, (o) => {
          if (o.metadata?.name === 'bad') throw new Error('boom');
          return objectKeyOf(o);
        }),
    );
    try {
      source.apply({ metadata: { namespace: 'ns', name: 'bad' } });
      source.apply({ metadata: { namespace: 'ns', name: 'good' } });
      await waitFor(() => h.calls.length === 1, { description: 'good reconciled' });
      expect(h.calls[0]?.key.name).toBe('good');
      expect(h.logs.some((e) => e.message === 'mapping an event failed' && e.level === 'error')).toBe(true);
    } finally {
      await h.stop();
    }
  });

  test('stopping before the sources sync returns without reconciling', async () => {
    const source = memorySource();
    source.apply({ metadata: { namespace: 'ns', name: 'a' } });
    const h = await startController(
      async () => undefined,
      1,
      (c) => c.watches(source),
    );
    await h.stop();
    expect(h.calls).toHaveLength(0);
  });

  test('a stopped controller starts again (a leader winning its lease back): a fresh queue, the store reconciled anew', async () => {
    const source = memorySource();
    source.apply({ metadata: { namespace: 'ns', name: 'a' } });
    source.markSynced();
    const calls: string[] = [];
    const controller = newController({
      name: 'restartable',
      reconcile: async ({ key }) => void calls.push(key.name),
      clock: new FakeClock(),
      log: newRecordingLogger([]),
    });
    controller.watches(source);
    for (const term of [1, 2]) {
      const abort = new AbortController();
      const running = controller.start(abort.signal);
      await waitFor(() => calls.length === term, { description: `term ${term} reconciled the store` });
      await expect(controller.start(new AbortController().signal)).rejects.toThrow(MeshError);
      abort.abort();
      await running;
    }
    // Events between terms are not lost: the next start reads the store.
    source.apply({ metadata: { namespace: 'ns', name: 'b' } });
    const abort = new AbortController();
    const running = controller.start(abort.signal);
    await waitFor(() => calls.includes('b'), { description: 'the object added while stopped' });
    abort.abort();
    await running;
  });

  test('watches after start is refused', async () => {
    const h = await startController(async () => undefined);
    try {
      expect(() => h.controller.watches(memorySource())).toThrow(MeshError);
    } finally {
      await h.stop();
    }
  });
});
