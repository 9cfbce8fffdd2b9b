import { describe, expect, test } from '@jest/globals';
import { newPushFindingsLedger, PUSH_CONDITIONS, type PushCondition } from './push-findings.js';

const counted = (ledger: { counts(): ReadonlyMap<PushCondition, number> }): Partial<Record<PushCondition, number>> =>
  Object.fromEntries([...ledger.counts()].filter(([, count]) => count > 0));

describe('push findings ledger', () => {
  test('counts distinct keys per condition, the context and the generators together, and tells each new key at once', () => {
    const heard: string[] = [];
    const ledger = newPushFindingsLedger([['duplicate-subset', 'a.example']], (condition, count) => heard.push(`${condition}=${count}`));
    ledger.add('duplicate-subset', 'a.example');
    ledger.add('duplicate-subset', 'b.example');
    ledger.add('duplicate-domain', 'x:80');
    ledger.add('duplicate-domain', 'x:80');
    expect(counted(ledger)).toEqual({ 'duplicate-subset': 2, 'duplicate-domain': 1 });
    expect(heard).toEqual(['duplicate-subset=2', 'duplicate-domain=1']);
    expect(ledger.counts().size).toBe(PUSH_CONDITIONS.length);
  });

  test.each([
    ['a full push (new version) starts the generators findings again', true, { 'endpoint-without-pod': 1 }],
    ['an endpoint-only push keeps them (listeners and routes are not built again)', false, { 'endpoint-without-pod': 1, 'proxy-without-workload': 1 }],
  ] as const)('%s; the context findings are the new context', (_name, full, expected) => {
    const ledger = newPushFindingsLedger([['duplicate-cluster', 'outbound|80||a']], () => undefined);
    ledger.add('proxy-without-workload', 'ghost.foo');
    const next = ledger.next(full, [['endpoint-without-pod', 'late.bar.svc.cluster.local']]);
    expect(counted(next)).toEqual(expected);
    expect(counted(ledger)).toEqual({ 'duplicate-cluster': 1, 'proxy-without-workload': 1 });
  });
});
