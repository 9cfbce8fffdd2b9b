import { describe, expect, test } from '@jest/globals';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { newDistributionLedger } from './distribution-ledger.js';

describe('the config distribution ledger', () => {
  test('a version answers the generation it carried, "" for a config it did not carry, undefined once forgotten', () => {
    const clock = new FakeClock();
    const ledger = newDistributionLedger({ retentionMs: 60_000 }, clock);
    ledger.record('v1', new Map([['VirtualService/foo/vs', '1']]));
    clock.advance(30_000);
    ledger.record(
      'v2',
      new Map([
        ['VirtualService/foo/vs', '2'],
        ['DestinationRule/foo/dr', '4'],
      ]),
    );
    expect(ledger.generationAt('v1', 'VirtualService/foo/vs')).toBe('1');
    expect(ledger.generationAt('v1', 'DestinationRule/foo/dr')).toBe('');
    expect(ledger.generationAt('v2', 'DestinationRule/foo/dr')).toBe('4');
    expect(ledger.generationAt('v9', 'VirtualService/foo/vs')).toBeUndefined();
    clock.advance(40_000);
    ledger.record('v3', new Map());
    // v1 is 70 s old: beyond the minute of retention; v2 (40 s) stays.
    expect(ledger.generationAt('v1', 'VirtualService/foo/vs')).toBeUndefined();
    expect(ledger.generationAt('v2', 'VirtualService/foo/vs')).toBe('2');
    clock.advance(120_000);
    ledger.record('v3', new Map([['VirtualService/foo/vs', '3']]));
    // The newest is always kept, however old the retention makes the others.
    expect(ledger.generationAt('v3', 'VirtualService/foo/vs')).toBe('3');
  });
});
