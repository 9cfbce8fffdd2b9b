import { getEventListeners, setMaxListeners } from 'node:events';
import { describe, expect, test } from '@jest/globals';
import { settledOrAborted } from './until-aborted.js';

describe('settledOrAborted', () => {
  test('follows the promise; its abort listener goes once the promise settles, resolved or rejected', async () => {
    const controller = new AbortController();
    // Many waits at once on purpose: Node would warn at eleven.
    setMaxListeners(100, controller.signal);
    const waits = [];
    for (let i = 0; i < 50; i++) waits.push(settledOrAborted(Promise.resolve(i), controller.signal));
    const failed = settledOrAborted(Promise.reject(new Error('source stopped')), controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(51);
    expect(await Promise.all(waits)).toEqual([...Array(50).keys()]);
    await expect(failed).rejects.toThrow('source stopped');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  test('rejects with the signal’s reason when it aborts first, or has already', async () => {
    const controller = new AbortController();
    const never = new Promise<void>(() => undefined);
    const waiting = settledOrAborted(never, controller.signal);
    controller.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow('stopping');
    await expect(settledOrAborted(never, controller.signal)).rejects.toThrow('stopping');
  });

  test('without a signal it is the promise itself', () => {
    const done = Promise.resolve('synced');
    expect(settledOrAborted(done, undefined)).toBe(done);
  });
});
