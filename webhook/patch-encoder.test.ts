import { describe, expect, test } from '@jest/globals';
import { deepFreeze } from '../kube-patch/index.js';
import { newPatchEncoder } from './patch-encoder.js';

const wire = (patch: readonly unknown[]): string => Buffer.from(JSON.stringify(patch)).toString('base64');

describe('the patch encoder', () => {
  test.each([
    [
      'strings that need escaping',
      [{ op: 'add', path: '/metadata/annotations/a~1b', value: 'quote " backslash \\ newline \n tab \t nul \u0000 lone \ud800 pair \ud83d\ude00 é' }],
    ],
    ['keys that need escaping', [{ op: 'add', path: '/x', value: { 'a"b': 1, 'c\\d': 2, 'e\nf': 3 } }]],
    [
      'undefined, functions and symbols: left out of objects, null in arrays',
      [{ op: 'add', path: '/x', value: { a: undefined, b: () => 1, c: Symbol('s'), d: [undefined, () => 1, Symbol('t'), 1] } }],
    ],
    ['numbers JSON cannot write', [{ op: 'add', path: '/x', value: [NaN, Infinity, -Infinity, -0, 1e21, 0.1] }]],
    [
      'a toJSON and other prototypes',
      [
        {
          op: 'add',
          path: '/x',
          value: { date: new Date(0), custom: { toJSON: () => 'custom' }, map: new Map([[1, 2]]), nested: Object.create(null) as object },
        },
      ],
    ],
    [
      'empty containers',
      [
        { op: 'add', path: '/x', value: { a: {}, b: [], c: [[]] } },
        { op: 'remove', path: '/y' },
      ],
    ],
    [
      'operations of other shapes',
      [
        { path: '/a', op: 'add', value: 1 },
        { op: 'move', from: '/b', path: '/c' },
        { op: 'add', path: '/d', value: undefined },
        { op: 'test', path: '/e', value: null, extra: true },
        Object.freeze({ op: 'remove', path: '/f' }),
        [1],
        'text',
        null,
      ],
    ],
    ['an __proto__ field', [{ op: 'add', path: '/x', value: JSON.parse('{"__proto__": {"a": 1}, "b": 2}') as unknown }]],
  ])('writes what JSON.stringify writes: %s', (_name, patch) => {
    const encoder = newPatchEncoder();
    const frozen = deepFreeze(
      structuredClone(patch.map((op: unknown) => (typeof op === 'object' && op !== null && 'value' in op ? { ...op, value: plainOnly(op.value) } : op))),
    );
    for (let i = 0; i < 3; i++) {
      expect(encoder.encode(patch)).toBe(wire(patch));
      expect(encoder.encode(frozen)).toBe(wire(frozen));
    }
  });

  test('frozen values are written once and again from memory; a value frozen only at the top is written afresh each time', () => {
    const encoder = newPatchEncoder();
    const sidecar = deepFreeze({ name: 'mesh-proxy', args: ['proxy', 'sidecar'], env: [{ name: 'A', value: '1' }] });
    const shallow = Object.freeze({ labels: { a: '1' } as Record<string, string> });
    const patchOf = () => [
      { op: 'add', path: '/spec/containers/1', value: sidecar },
      { op: 'add', path: '/metadata', value: shallow },
    ];
    for (let i = 0; i < 3; i++) expect(encoder.encode(patchOf())).toBe(wire(patchOf()));
    // The top is frozen, what is under it is not: a change shows.
    shallow.labels['b'] = '2';
    expect(encoder.encode(patchOf())).toBe(wire(patchOf()));
    expect(Buffer.from(encoder.encode(patchOf()), 'base64').toString()).toContain('"b":"2"');
  });

  test('a patch the same as the last one, operation for operation, is written the same; a change anywhere shows, even in a value changed in place', () => {
    const encoder = newPatchEncoder();
    const sidecar = deepFreeze({ name: 'mesh-proxy', env: [{ name: 'A', value: '1' }] });
    const annotations: Record<string, unknown> = { 'sidecar.mesh.io/status': '{"containers":["mesh-proxy"]}' };
    const labels = { app: 'a' };
    const patch = [
      { op: 'add', path: '/spec/containers/1', value: sidecar },
      { op: 'add', path: '/metadata/annotations', value: annotations },
      { op: 'add', path: '/metadata/labels', value: labels },
    ];
    const check = (): void => expect(encoder.encode(patch)).toBe(wire(patch));
    for (let i = 0; i < 3; i++) check();
    annotations['x'] = 'y';
    check();
    labels.app = 'b';
    check();
    annotations['list'] = [1, { deep: true }];
    check();
    ((annotations['list'] as unknown[])[1] as Record<string, unknown>)['deep'] = false;
    check();
    patch.reverse();
    check();
    patch.pop();
    check();
    patch.push({ op: 'remove', path: '/spec/volumes/0' } as never);
    check();
  });

  test('a stream of fresh values (nothing comes back) is written the same', () => {
    const encoder = newPatchEncoder();
    for (let i = 0; i < 100; i++) {
      const patch = [
        { op: 'add', path: '/spec/containers/1', value: deepFreeze({ name: `c${i}`, env: [{ name: 'N', value: String(i) }] }) },
        { op: 'replace', path: '/x', value: i },
      ];
      expect(encoder.encode(patch)).toBe(wire(patch));
    }
    // Then the same values again and again.
    const same = deepFreeze({ name: 'again', env: [{ name: 'N', value: 'x' }] });
    for (let i = 0; i < 40; i++) {
      const patch = [
        { op: 'add', path: '/spec/containers/1', value: same },
        { op: 'add', path: `/metadata/labels/l${i}`, value: 'é' },
      ];
      expect(encoder.encode(patch)).toBe(wire(patch));
    }
  });
});

/** What structuredClone keeps of a value (functions and symbols cannot be cloned: left out of the frozen copy). */
function plainOnly(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value) ?? 'null') as unknown;
}
