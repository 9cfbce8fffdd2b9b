import { describe, expect, test } from '@jest/globals';
import { controllerFor } from './builder.js';
import { FakeClock } from './testing/fake-clock.js';
import type { ReconcileRequest } from './controller.js';
import { newNopLogger } from './log/logger.js';
import { newManager } from './manager.js';
import { newExponentialFailureRateLimiter } from './rate-limiter.js';
import type { KubeObject, ObjectKey, Source, SourceHandler } from './source.js';
import { waitFor } from '../testing/wait-for.js';

/** A source that syncs when started, like an informer wrapper, and records its start. */
function startedSource(name: string, initial: KubeObject[], events: string[]): Source & { apply(o: KubeObject): void } {
  const objects = new Map(initial.map((o) => [`${o.metadata?.namespace}/${o.metadata?.name}`, o]));
  const handlers = new Set<SourceHandler<KubeObject>>();
  let synced = false;
  const onSync: (() => void)[] = [];
  return {
    name,
    store: { get: (k: ObjectKey) => objects.get(`${k.namespace}/${k.name}`), list: () => [...objects.values()] },
    subscribe(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    async start(signal) {
      events.push(`start:${name}`);
      synced = true;
      for (const resolve of onSync.splice(0)) resolve();
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    },
    waitForSync: () => (synced ? Promise.resolve() : new Promise<void>((resolve) => onSync.push(resolve))),
    isSynced: () => synced,
    apply(object) {
      objects.set(`${object.metadata?.namespace}/${object.metadata?.name}`, object);
      for (const handler of handlers) handler({ type: 'apply', object });
    },
  };
}

describe('controllerFor', () => {
  test('registers the controller and its sources; the manager starts the sources first', async () => {
    const events: string[] = [];
    const calls: ReconcileRequest[] = [];
    const clock = new FakeClock();
    const manager = newManager({ log: newNopLogger(), clock });
    const policies = startedSource('policies', [{ metadata: { namespace: 'ns', name: 'p1' } }], events);
    const services = startedSource('services', [], events);
    const errors: Record<string, string>[] = [];

    const controller = controllerFor(manager, 'policy')
      .watches(policies)
      .watches(services, (svc) => ({ namespace: svc.metadata?.namespace ?? '', name: `policy-for-${svc.metadata?.name}` }))
      .withWorkers(2)
      .withRateLimiter(newExponentialFailureRateLimiter<ObjectKey>({ baseDelayMs: 1000 }))
      .withSyncErrors({ inc: (labels) => errors.push(labels ?? {}) }, { cluster: 'Kubernetes' })
      .withLeaderElection(false)
      .complete(async (request) => {
        events.push(`reconcile:${request.key.name}`);
        calls.push(request);
        if (request.key.name === 'fails') throw new Error('nope');
      });

    expect(controller.name).toBe('policy');
    expect(controller.needLeaderElection?.()).toBe(false);
    expect(controller.sources().map((s) => s.name)).toEqual(['policies', 'services']);

    const abort = new AbortController();
    const running = manager.start(abort.signal);
    try {
      await waitFor(() => calls.length === 1, { description: 'initial object reconciled' });
      expect(events).toEqual(['start:policies', 'start:services', 'reconcile:p1']);

      services.apply({ metadata: { namespace: 'ns', name: 'web' } });
      await waitFor(() => calls.length === 2, { description: 'mapped key reconciled' });
      expect(calls[1]?.key).toEqual({ namespace: 'ns', name: 'policy-for-web' });

      controller.enqueue({ namespace: 'ns', name: 'fails' });
      await waitFor(() => errors.length === 1 && clock.pendingTimers() === 1, { description: 'failure counted and requeued' });
      expect(errors).toEqual([{ cluster: 'Kubernetes' }]);
      clock.advance(999);
      await new Promise((resolve) => setImmediate(resolve));
      expect(errors).toHaveLength(1);
      clock.advance(1);
      await waitFor(() => errors.length === 2, { description: 'retried with the given rate limiter' });
    } finally {
      abort.abort();
      await running;
    }
  });

  test('by default the controller is leader-elected, as in controller-runtime', () => {
    const manager = newManager({ log: newNopLogger(), clock: new FakeClock() });
    const controller = controllerFor(manager, 'status').complete(async () => undefined);
    expect(controller.needLeaderElection?.()).toBe(true);
  });
});
