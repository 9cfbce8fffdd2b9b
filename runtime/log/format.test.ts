import { describe, expect, test } from '@jest/globals';
import { formatConsole, formatJson, formatTimestamp, type LogEntry } from './format.js';

const AT = Date.UTC(2026, 10, 22, 6, 43, 26, 123);

function entry(overrides: Partial<LogEntry> = {}): LogEntry {
  return { timeMs: AT, level: 'info', scope: 'ads', message: 'pushed', fields: {}, ...overrides };
}

describe('formatTimestamp', () => {
  test.each([
    [AT, '2026-11-22T06:43:26.123000Z'],
    [AT + 0.456, '2026-11-22T06:43:26.123456Z'],
    [Date.UTC(2026, 0, 2, 3, 4, 5, 6), '2026-01-02T03:04:05.006000Z'],
    [0, '1970-01-01T00:00:00.000000Z'],
  ])('%d', (ms, text) => {
    expect(formatTimestamp(ms)).toBe(text);
  });
});

describe('formatConsole', () => {
  test('tab-separated columns, fields as key=value', () => {
    const text = formatConsole(entry({ fields: { proxy: 'sidecar~10.0.0.1', count: 3, ok: true, reason: 'config update', none: null, skipped: undefined } }));
    expect(text).toBe('2026-11-22T06:43:26.123000Z\tinfo\tads\tpushed\tproxy=sidecar~10.0.0.1 count=3 ok=true reason="config update" none=null\n');
  });

  test('no scope column for default, no fields column without fields', () => {
    expect(formatConsole(entry({ scope: 'default', level: 'warn' }))).toBe('2026-11-22T06:43:26.123000Z\twarn\tpushed\n');
  });

  test('caller after level and scope, stack on the following lines', () => {
    const text = formatConsole(entry({ caller: 'xds/ads.ts:42', stack: 'at a (x.ts:1:1)\nat b (y.ts:2:2)' }));
    expect(text).toBe('2026-11-22T06:43:26.123000Z\tinfo\tads\txds/ads.ts:42\tpushed\nat a (x.ts:1:1)\nat b (y.ts:2:2)\n');
  });

  test.each([
    ['', '""'],
    ['a=b', '"a=b"'],
    ['say "hi"', '"say \\"hi\\""'],
    ['tab\there', '"tab\\there"'],
    ['plain', 'plain'],
  ])('quotes %j as %s', (value, rendered) => {
    expect(formatConsole(entry({ fields: { v: value } }))).toContain(`\tv=${rendered}\n`);
  });

  test('errors render as their message, objects as compact JSON', () => {
    const text = formatConsole(entry({ fields: { error: new Error('connection reset'), keys: ['a', 'b'], big: 10n } }));
    expect(text).toContain('\terror="connection reset" keys=["a","b"] big=10\n');
  });
});

describe('formatJson', () => {
  test('one object per line in the documented key order', () => {
    const text = formatJson(entry({ fields: { proxy: 'p1', count: 3 }, caller: 'xds/ads.ts:42', stack: 'at a (x.ts:1:1)' }));
    expect(text).toBe(
      '{"time":"2026-11-22T06:43:26.123000Z","level":"info","scope":"ads","msg":"pushed","proxy":"p1","count":3,"caller":"xds/ads.ts:42","stack":"at a (x.ts:1:1)"}\n',
    );
  });

  test('default scope has no scope key', () => {
    expect(JSON.parse(formatJson(entry({ scope: 'default' })))).toEqual({
      time: '2026-11-22T06:43:26.123000Z',
      level: 'info',
      msg: 'pushed',
    });
  });

  test('errors render as their message; their stack only when the entry captured one', () => {
    const error = new Error('boom');
    expect(JSON.parse(formatJson(entry({ fields: { err: error } })))).toEqual(expect.not.objectContaining({ errStack: expect.anything() }));
    const withStack = JSON.parse(formatJson(entry({ fields: { err: error }, stack: 'at a (x.ts:1:1)' }))) as Record<string, unknown>;
    expect(withStack['err']).toBe('boom');
    expect(withStack['errStack']).toBe(error.stack);
  });

  test('a field named like an entry key cannot hide it', () => {
    const parsed = JSON.parse(formatJson(entry({ fields: { level: 'x', msg: 'y' } }))) as Record<string, unknown>;
    expect(parsed['level']).toBe('info');
    expect(parsed['msg']).toBe('pushed');
    expect(parsed['fields.level']).toBe('x');
    expect(parsed['fields.msg']).toBe('y');
  });

  test('unserializable values do not throw', () => {
    const loop: Record<string, unknown> = {};
    loop['self'] = loop;
    expect(JSON.parse(formatJson(entry({ fields: { loop, n: 1 } })))).toEqual(expect.objectContaining({ msg: 'pushed', loop: '[unserializable]', n: 1 }));
  });
});
