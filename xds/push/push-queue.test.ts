import { describe, expect, test } from '@jest/globals';
import { newNopLogger } from '../../runtime/index.js';
import { newPushQueue } from './push-queue.js';
import { startPushWorkers } from './push-workers.js';

const merge = (older: string[], newer: string[]): string[] => [...older, ...newer];

describe('newPushQueue', () => {
  test('keeps one pending entry per connection and merges into it', async () => {
    const queue = newPushQueue<string, string[]>(merge);
    queue.enqueue('a', ['1']);
    queue.enqueue('b', ['1']);
    queue.enqueue('a', ['2']);
    expect(queue.pending()).toBe(2);
    expect(await queue.dequeue()).toEqual(['a', ['1', '2']]);
    expect(await queue.dequeue()).toEqual(['b', ['1']]);
    expect(queue.pending()).toBe(0);
  });

  test('a push for a connection in progress waits aside and is re-queued by markDone', async () => {
    const queue = newPushQueue<string, string[]>(merge);
    queue.enqueue('a', ['1']);
    expect(await queue.dequeue()).toEqual(['a', ['1']]);
    queue.enqueue('a', ['2']);
    queue.enqueue('a', ['3']);
    expect(queue.pending()).toBe(0);
    queue.markDone('a');
    expect(await queue.dequeue()).toEqual(['a', ['2', '3']]);
    queue.markDone('a');
    expect(queue.pending()).toBe(0);
  });

  test('a waiting dequeue gets the next entry; shutDown releases waiters', async () => {
    const queue = newPushQueue<string, string[]>(merge);
    const waiting = queue.dequeue();
    queue.enqueue('a', ['1']);
    expect(await waiting).toEqual(['a', ['1']]);
    const idle = queue.dequeue();
    queue.shutDown();
    expect(await idle).toBeUndefined();
    queue.enqueue('b', ['1']);
    expect(await queue.dequeue()).toBeUndefined();
  });

  test('a removed connection is skipped', async () => {
    const queue = newPushQueue<string, string[]>(merge);
    queue.enqueue('a', ['1']);
    queue.enqueue('b', ['1']);
    queue.remove('a');
    expect(await queue.dequeue()).toEqual(['b', ['1']]);
  });
});

describe('startPushWorkers', () => {
  test('never works on more connections at once than the throttle', async () => {
    const queue = newPushQueue<number, number>((a, b) => a + b);
    let active = 0;
    let maxActive = 0;
    const releases: Array<() => void> = [];
    const done: number[] = [];
    const workers = startPushWorkers(
      queue,
      3,
      async (key) => {
        active++;
        maxActive = Math.max(maxActive, active);
        await new Promise<void>((resolve) => releases.push(resolve));
        active--;
        done.push(key);
      },
      newNopLogger(),
    );
    for (let key = 0; key < 10; key++) queue.enqueue(key, 1);
    const settle = async () => {
      for (let i = 0; i < 10; i++) await Promise.resolve();
    };
    await settle();
    expect(active).toBe(3);
    while (done.length < 10) {
      releases.shift()?.();
      await settle();
      expect(active).toBeLessThanOrEqual(3);
    }
    expect(maxActive).toBe(3);
    expect(done.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    queue.shutDown();
    await workers.done;
  });

  test('a failing push is logged and the worker goes on', async () => {
    const queue = newPushQueue<number, number>((a, b) => a + b);
    const seen: number[] = [];
    const workers = startPushWorkers(
      queue,
      1,
      async (key) => {
        seen.push(key);
        if (key === 1) throw new Error('boom');
      },
      newNopLogger(),
    );
    queue.enqueue(1, 1);
    queue.enqueue(2, 1);
    for (let i = 0; i < 20 && seen.length < 2; i++) await Promise.resolve();
    expect(seen).toEqual([1, 2]);
    queue.shutDown();
    await workers.done;
  });
});
