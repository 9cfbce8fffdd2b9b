import { describe, expect, test } from '@jest/globals';
import { FakeClock } from '../runtime/testing/fake-clock.js';
import { defaultNewStreamsPerSecond, newStreamAdmission } from './stream-admission.js';

/** Lets every promise the fake clock resolved run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('admission of new xDS streams', () => {
  test('the reference default: 15 + 5 per core, at most 100', () => {
    expect([1, 2, 4, 16, 64].map((cores) => defaultNewStreamsPerSecond(cores))).toEqual([20, 25, 35, 95, 100]);
  });

  test('one turn per interval; a stream waits for its turn up to the limit, beyond it is refused at once and takes no turn', async () => {
    const clock = new FakeClock();
    const admission = newStreamAdmission({ perSecond: 10, maxWaitMs: 1000, clock });
    const outcomes: (boolean | 'waiting')[] = Array.from({ length: 13 }, () => 'waiting');
    const done = outcomes.map((_, index) => admission.admit().then((admitted) => void (outcomes[index] = admitted)));
    await flush();
    // The first at once, the next ten each 100 ms later (the tenth exactly at the limit), the last two refused.
    expect(outcomes[0]).toBe(true);
    expect(outcomes.slice(11)).toEqual([false, false]);
    expect(outcomes.slice(1, 11).every((outcome) => outcome === 'waiting')).toBe(true);
    clock.advance(550);
    await flush();
    expect(outcomes.slice(1, 11).filter((outcome) => outcome === true)).toHaveLength(5);
    clock.advance(500);
    await Promise.all(done);
    expect(outcomes.filter((outcome) => outcome === true)).toHaveLength(11);
    // The refused took no turn: the next turn is one interval after the last admitted.
    let late: boolean | undefined;
    void admission.admit().then((admitted) => (late = admitted));
    clock.advance(50);
    await flush();
    expect(late).toBe(true);
  });

  test('a stream that goes away while it waits gives up its wait', async () => {
    const clock = new FakeClock();
    const admission = newStreamAdmission({ perSecond: 1, maxWaitMs: 1000, clock });
    expect(await admission.admit()).toBe(true);
    const gone = new AbortController();
    const waiting = admission.admit(gone.signal);
    gone.abort();
    expect(await waiting).toBe(false);
  });

  test('0 per second admits everything at once', async () => {
    const admission = newStreamAdmission({ perSecond: 0, maxWaitMs: 1000, clock: new FakeClock() });
    expect(await Promise.all(Array.from({ length: 500 }, () => admission.admit()))).toEqual(Array.from({ length: 500 }, () => true));
  });
});
