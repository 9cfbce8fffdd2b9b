import { describe, expect, test } from '@jest/globals';
import { newKubeThrottle, throttledTransport } from './kube-throttle.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import type { KubeTransport } from '../../runtime/index.js';

/** Starts `count` waits at once and reports which have resolved after each advance. */
function startWaits(throttle: ReturnType<typeof newKubeThrottle>, count: number): { passed: () => number[] } {
  const passed: number[] = [];
  for (let i = 0; i < count; i++) void throttle.wait().then(() => passed.push(i));
  return { passed: () => [...passed].sort((a, b) => a - b) };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('kube throttle', () => {
  test('a full bucket lets a burst through at once, then one request per 1/qps, in order', async () => {
    const clock = new FakeClock();
    const throttle = newKubeThrottle({ qps: 10, burst: 3, clock });
    const waits = startWaits(throttle, 6);
    await settle();
    expect(waits.passed()).toEqual([0, 1, 2]);
    clock.advance(99);
    await settle();
    expect(waits.passed()).toEqual([0, 1, 2]);
    clock.advance(1);
    await settle();
    expect(waits.passed()).toEqual([0, 1, 2, 3]);
    clock.advance(200);
    await settle();
    expect(waits.passed()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  test('the bucket refills with time, up to the burst', async () => {
    const clock = new FakeClock();
    const throttle = newKubeThrottle({ qps: 2, burst: 2, clock });
    const first = startWaits(throttle, 2);
    await settle();
    expect(first.passed()).toEqual([0, 1]);
    clock.advance(60_000);
    const second = startWaits(throttle, 3);
    await settle();
    expect(second.passed()).toEqual([0, 1]);
  });

  test('a wait is abandoned when its signal aborts', async () => {
    const clock = new FakeClock();
    const throttle = newKubeThrottle({ qps: 1, burst: 1, clock });
    await throttle.wait();
    const controller = new AbortController();
    const waiting = throttle.wait(controller.signal);
    controller.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow('stopping');
  });

  test('the throttled transport waits before each request is prepared', async () => {
    const clock = new FakeClock();
    const prepared: number[] = [];
    const transport: KubeTransport = {
      getCurrentCluster: () => null,
      applyToHTTPSOptions: async () => {
        prepared.push(clock.now());
      },
    };
    const throttled = throttledTransport(transport, newKubeThrottle({ qps: 1, burst: 1, clock }));
    await throttled.applyToHTTPSOptions({});
    const second = throttled.applyToHTTPSOptions({});
    await settle();
    expect(prepared).toHaveLength(1);
    clock.advance(1000);
    await second;
    expect(prepared).toHaveLength(2);
    expect(throttled.getCurrentCluster()).toBeNull();
  });
});
