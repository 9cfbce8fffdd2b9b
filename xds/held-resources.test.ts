import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { EncodedResource } from './generator.js';
import { HeldResources, type HeldResource } from './held-resources.js';

const resource = (name: string, version: string): EncodedResource => ({ name, version, any: { type_url: 't', value: new Uint8Array([1]) } });

describe('what a proxy holds of one type', () => {
  test('a later response replaces a name sent before; names keep the order they were first sent in', () => {
    const held = new HeldResources();
    held.sent([resource('a', '1'), resource('b', '1')], 10);
    held.sent([resource('b', '2'), resource('c', '1')], 20);
    expect(held.size).toBe(3);
    expect([...held.names()]).toEqual(['a', 'b', 'c']);
    expect(held.get('a')).toMatchObject({ version: '1', sentAt: 10 });
    expect(held.get('b')).toMatchObject({ version: '2', sentAt: 20, resource: { name: 'b', version: '2' } });
  });

  test('delete, retain and clear; versions without bytes (delta initial versions)', () => {
    const held = new HeldResources();
    expect(held.size).toBe(0);
    expect(held.has('a')).toBe(false);
    held.set('a', 'v0', 0);
    held.sent([resource('b', '1'), resource('c', '1')], 5);
    held.delete('b');
    expect([...held.entries()]).toEqual([
      ['a', { version: 'v0', sentAt: 0 }],
      ['c', expect.objectContaining({ version: '1', sentAt: 5 })],
    ]);
    held.retain((name) => name !== 'a');
    expect([...held.names()]).toEqual(['c']);
    held.clear();
    expect(held.size).toBe(0);
    expect(held.get('c')).toBeUndefined();
  });

  test('retain without an index filters the responses held, keeping a shared list that loses nothing', () => {
    const names = Array.from({ length: 70 }, (_, i) => `n${i}`);
    const list = Object.freeze(names.map((name) => resource(name, '1')));
    const held = new HeldResources();
    held.sent(list, 1);
    held.sent([resource('gone', '1'), resource('n3', '2')], 2);
    held.retain((name) => name !== 'gone');
    expect(held.empty).toBe(false);
    expect(held.has('gone')).toBe(false);
    expect(held.get('n3')).toMatchObject({ version: '2' });
    expect(held.size).toBe(70);
    held.retain(() => false);
    expect(held.empty).toBe(true);
  });

  test('always agrees with a plain map, whatever the order of operations, with responses of their own and shared (frozen) ones', () => {
    type Op =
      | { kind: 'sent'; names: string[] }
      | { kind: 'shared'; count: number }
      | { kind: 'delete' | 'set'; name: string }
      | { kind: 'clear' | 'read' }
      | { kind: 'retain'; drop: string };
    const name = fc.constantFrom('a', 'b', 'c', 'd', 'e');
    const pool = ['e', 'c', 'a', ...Array.from({ length: 67 }, (_, i) => `n${i}`)];
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('sent' as const), names: fc.array(name, { maxLength: 4 }) }),
      fc.record({ kind: fc.constant('shared' as const), count: fc.constantFrom(2, 64, 70) }),
      fc.record({ kind: fc.constantFrom('delete' as const, 'set' as const), name }),
      fc.record({ kind: fc.constantFrom('clear' as const, 'read' as const) }),
      fc.record({ kind: fc.constant('retain' as const), drop: name }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const held = new HeldResources();
        const model = new Map<string, HeldResource>();
        ops.forEach((step, time) => {
          if (step.kind === 'sent' || step.kind === 'shared') {
            const resources =
              step.kind === 'sent'
                ? step.names.map((n) => resource(n, `v${time}`))
                : Object.freeze(pool.slice(0, step.count).map((n) => resource(n, `s${time}`)));
            held.sent(resources, time);
            for (const r of resources) model.set(r.name, { version: r.version, resource: r, sentAt: time });
          } else if (step.kind === 'set') {
            held.set(step.name, `i${time}`, 0);
            model.set(step.name, { version: `i${time}`, sentAt: 0 });
          } else if (step.kind === 'delete') {
            held.delete(step.name);
            model.delete(step.name);
          } else if (step.kind === 'clear') {
            held.clear();
            model.clear();
          } else if (step.kind === 'retain') {
            held.retain((n) => n !== step.drop);
            model.delete(step.drop);
          } else {
            expect(held.size).toBe(model.size);
            expect(held.empty).toBe(model.size === 0);
          }
        });
        expect(held.empty).toBe(model.size === 0);
        expect(new Map(held.entries())).toEqual(model);
        expect([...held.names()]).toEqual([...model.keys()]);
      }),
      { numRuns: 300 },
    );
  });
});
