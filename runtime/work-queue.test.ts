import { describe, expect, test } from '@jest/globals';
import { FakeClock } from './testing/fake-clock.js';
import { newExponentialFailureRateLimiter } from './rate-limiter.js';
import type { ObjectKey } from './source.js';
import { newWorkQueue, type WorkQueue } from './work-queue.js';

function setup(): { clock: FakeClock; queue: WorkQueue<string> } {
  const clock = new FakeClock();
  const queue = newWorkQueue<string>({ clock, rateLimiter: newExponentialFailureRateLimiter<string>(), name: 'test' });
  return { clock, queue };
}

/** Lets every settled promise run its callbacks (no timers involved). */
function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Tracks a get() without awaiting it, to assert whether it has resolved yet. */
function pendingGet<K>(queue: WorkQueue<K>): { resolved: () => boolean; value: Promise<K | undefined> } {
  let done = false;
  const value = queue.get().then((key) => {
    done = true;
    return key;
  });
  return { resolved: () => done, value };
}

describe('work queue', () => {
  test('a key waiting in the queue is there once, in first-added order', async () => {
    const { queue } = setup();
    for (const key of ['a', 'b', 'a', 'c', 'b']) queue.add(key);
    expect(queue.len()).toBe(3);
    expect([await queue.get(), await queue.get(), await queue.get()]).toEqual(['a', 'b', 'c']);
    expect(queue.len()).toBe(0);
  });

  test('object keys are deduplicated by keyOf', async () => {
    const clock = new FakeClock();
    const queue = newWorkQueue<ObjectKey>({
      clock,
      rateLimiter: newExponentialFailureRateLimiter<ObjectKey>(),
      name: 'objects',
      keyOf: (k) => `${k.namespace}/${k.name}`,
    });
    queue.add({ namespace: 'ns', name: 'a' });
    queue.add({ namespace: 'ns', name: 'a' });
    queue.add({ namespace: 'other', name: 'a' });
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toEqual({ namespace: 'ns', name: 'a' });
  });

  test('get waits for a key', async () => {
    const { queue } = setup();
    const next = pendingGet(queue);
    await flush();
    expect(next.resolved()).toBe(false);
    queue.add('a');
    expect(await next.value).toBe('a');
  });

  test('a key being processed is never handed to a second worker; an add meanwhile re-queues it at done', async () => {
    const { queue } = setup();
    queue.add('a');
    const first = await queue.get();
    expect(first).toBe('a');

    queue.add('a');
    queue.add('a');
    expect(queue.len()).toBe(0);
    const second = pendingGet(queue);
    await flush();
    expect(second.resolved()).toBe(false);

    queue.done('a');
    expect(await second.value).toBe('a');
    queue.done('a');
    expect(queue.len()).toBe(0);

    // Without an add while processing, done does not re-queue.
    queue.add('b');
    expect(await queue.get()).toBe('b');
    queue.done('b');
    expect(queue.len()).toBe(0);
  });

  test('other keys flow while one is processing', async () => {
    const { queue } = setup();
    queue.add('a');
    queue.add('b');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    expect(await queue.get()).toBe('b');
    expect(queue.len()).toBe(0);
  });

  test('addAfter releases keys in due order on the clock; for a duplicate the earliest time wins', async () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 100);
    queue.addAfter('b', 50);
    queue.addAfter('a', 30);
    queue.addAfter('c', 10);
    queue.addAfter('c', 500);
    expect(queue.len()).toBe(0);

    const order: string[] = [];
    for (const step of [10, 20, 20, 100]) {
      clock.advance(step);
      while (queue.len() > 0) order.push((await queue.get()) as string);
    }
    expect(order).toEqual(['c', 'a', 'b']);
    clock.advance(1000);
    expect(queue.len()).toBe(0);
  });

  test('addAfter with no delay adds at once', () => {
    const { queue } = setup();
    queue.addAfter('a', 0);
    expect(queue.len()).toBe(1);
  });

  test('rate-limited adds back off exponentially until forget', async () => {
    const { clock, queue } = setup();
    const delays: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      queue.addRateLimited('a');
      let waited = 0;
      while (queue.len() === 0) {
        clock.advance(1);
        waited++;
      }
      delays.push(waited);
      expect(await queue.get()).toBe('a');
      queue.done('a');
    }
    expect(delays).toEqual([5, 10, 20, 40]);
    expect(queue.numRequeues('a')).toBe(4);

    queue.forget('a');
    expect(queue.numRequeues('a')).toBe(0);
    queue.addRateLimited('a');
    clock.advance(4);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
  });

  test('shutDown hands out the keys still waiting, then undefined; later adds are ignored', async () => {
    const { clock, queue } = setup();
    const idle = pendingGet(queue);
    queue.add('a');
    expect(await idle.value).toBe('a');
    queue.add('b');
    queue.addAfter('late', 10);

    queue.shutDown();
    expect(queue.isShuttingDown()).toBe(true);
    queue.add('c');
    clock.advance(100);
    expect(await queue.get()).toBe('b');
    expect(await queue.get()).toBeUndefined();
    expect(await queue.get()).toBeUndefined();
  });

  test('shutDown wakes every idle worker', async () => {
    const { queue } = setup();
    const waiting = [pendingGet(queue), pendingGet(queue)];
    await flush();
    queue.shutDown();
    expect(await Promise.all(waiting.map((w) => w.value))).toEqual([undefined, undefined]);
  });

  test('shutDownWithDrain resolves once every key in process is done', async () => {
    const { queue } = setup();
    queue.add('a');
    queue.add('b');
    const a = (await queue.get()) as string;
    const b = (await queue.get()) as string;
    let drained = false;
    const drain = queue.shutDownWithDrain().then(() => {
      drained = true;
    });
    queue.done(a);
    await flush();
    expect(drained).toBe(false);
    queue.done(b);
    await drain;
    expect(drained).toBe(true);
  });

  test('a dirty key re-queued at done after shutDown is still handed out', async () => {
    const { queue } = setup();
    queue.add('a');
    expect(await queue.get()).toBe('a');
    queue.add('a');
    queue.shutDown();
    queue.done('a');
    expect(await queue.get()).toBe('a');
    queue.done('a');
    expect(await queue.get()).toBeUndefined();
  });
});
