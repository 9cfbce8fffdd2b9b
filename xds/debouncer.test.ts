import { describe, expect, test } from '@jest/globals';
import { newNopLogger } from '../runtime/index.js';
import { FakeClock } from '../runtime/testing/fake-clock.js';
import { newDebouncer } from './debouncer.js';
import { mergePushRequests, pushRequestOf, type ConfigKey, type PushChange, type PushRequest } from './push/push-request.js';

const key = (name: string): ConfigKey => ({ kind: 'Service', namespace: 'default', name });

function setup(options: { after?: number; max?: number; edsDebounce?: boolean } = {}) {
  const clock = new FakeClock(0);
  const pushes: Array<PushRequest & { at: number }> = [];
  let release: (() => void) | undefined;
  let holdPushes = false;
  const debouncer = newDebouncer({
    clock,
    debounceAfterMs: options.after ?? 100,
    debounceMaxMs: options.max ?? 1000,
    enableEdsDebounce: options.edsDebounce ?? true,
    push: async (request) => {
      pushes.push({ ...request, at: clock.now() });
      if (holdPushes) await new Promise<void>((resolve) => (release = resolve));
    },
    log: newNopLogger(),
  });
  const add = (request: Partial<PushChange> = {}) =>
    debouncer.add(pushRequestOf({ full: true, configsUpdated: [], reason: 'config', startedAt: clock.now(), ...request }));
  return {
    clock,
    pushes,
    debouncer,
    add,
    hold: () => (holdPushes = true),
    release: async () => {
      holdPushes = false;
      release?.();
      // Let the push's promise chain settle.
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
  };
}

describe('newDebouncer', () => {
  test('pushes once after the quiet period', () => {
    const { clock, pushes, add } = setup();
    add();
    clock.advance(99);
    expect(pushes).toHaveLength(0);
    clock.advance(1);
    expect(pushes).toHaveLength(1);
    expect(pushes[0]?.at).toBe(100);
  });

  test('extends the quiet period while events keep arriving and merges them', () => {
    const { clock, pushes, add } = setup();
    add({ configsUpdated: [key('a')], reason: 'config' });
    clock.advance(50);
    add({ configsUpdated: [key('b')], reason: 'service', full: false });
    clock.advance(90);
    add({ configsUpdated: [key('a')], reason: 'config', full: false });
    clock.advance(99);
    expect(pushes).toHaveLength(0);
    clock.advance(1);
    expect(pushes).toHaveLength(1);
    const [push] = pushes;
    expect(push?.at).toBe(240);
    expect(push?.full).toBe(true);
    expect(push?.startedAt).toBe(0);
    expect(push?.configsUpdated.map((k) => k.name).sort()).toEqual(['a', 'b']);
    expect(Object.fromEntries(push?.reasons ?? [])).toEqual({ config: 2, service: 1 });
  });

  test('caps the wait at the maximum from the first event', () => {
    const { clock, pushes, add } = setup({ after: 100, max: 300 });
    for (let t = 0; t < 500; t += 50) {
      add();
      clock.advance(50);
    }
    expect(pushes.map((p) => p.at)).toEqual([300]);
  });

  test('endpoint-only requests skip debouncing when EDS debounce is off', () => {
    const { clock, pushes, add } = setup({ edsDebounce: false });
    add({ full: false, reason: 'endpoint', configsUpdated: [key('a')] });
    expect(pushes).toHaveLength(1);
    expect(pushes[0]).toMatchObject({ full: false, at: 0 });
    add({ full: true });
    expect(pushes).toHaveLength(1);
    clock.advance(100);
    expect(pushes).toHaveLength(2);
  });

  test('endpoint-only requests are debounced by default', () => {
    const { clock, pushes, add } = setup();
    add({ full: false, reason: 'endpoint' });
    expect(pushes).toHaveLength(0);
    clock.advance(100);
    expect(pushes).toHaveLength(1);
  });

  test('a zero quiet period pushes at once', () => {
    const { pushes, add } = setup({ after: 0 });
    add();
    expect(pushes).toHaveLength(1);
  });

  test('runs one debounced push at a time; what arrives meanwhile goes out when it settles', async () => {
    const { clock, pushes, add, hold, release } = setup();
    hold();
    add({ configsUpdated: [key('a')] });
    clock.advance(100);
    expect(pushes).toHaveLength(1);
    add({ configsUpdated: [key('b')] });
    add({ configsUpdated: [key('c')] });
    clock.advance(500);
    expect(pushes).toHaveLength(1);
    await release();
    expect(pushes).toHaveLength(2);
    expect(pushes[1]?.configsUpdated.map((k) => k.name)).toEqual(['b', 'c']);
  });

  test('stop drops the pending batch', () => {
    const { clock, pushes, add, debouncer } = setup();
    add();
    debouncer.stop();
    clock.advance(1000);
    expect(pushes).toHaveLength(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('mergePushRequests', () => {
  const request = (partial: Partial<PushChange>): PushRequest =>
    pushRequestOf({ full: false, configsUpdated: [], reason: 'endpoint', startedAt: 10, ...partial });

  test('an empty config list means everything and wins the union', () => {
    const merged = mergePushRequests(request({ configsUpdated: [key('a')] }), request({ full: true, configsUpdated: [], reason: 'mesh-config', startedAt: 5 }));
    expect(merged).toMatchObject({ full: true, configsUpdated: [], startedAt: 5 });
    expect(Object.fromEntries(merged.reasons)).toEqual({ endpoint: 1, 'mesh-config': 1 });
  });

  test('unions config keys without duplicates', () => {
    const merged = mergePushRequests(request({ configsUpdated: [key('a'), key('b')] }), request({ configsUpdated: [key('b'), key('c')] }));
    expect(merged.configsUpdated.map((k) => k.name)).toEqual(['a', 'b', 'c']);
    expect(merged.full).toBe(false);
  });
});
