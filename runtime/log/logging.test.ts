import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { FakeClock } from '../testing/fake-clock.js';
import { MeshError, UsageError } from '../errors.js';
import { parseLevelSpec } from './level-spec.js';
import { newLogging, type LoggingDeps } from './logging.js';
import type { LoggingOptions } from './options.js';
import { DAEMON_SCOPES } from './scopes.js';

const AT = Date.UTC(2026, 10, 22, 6, 43, 26, 123);
const STAMP = '2026-11-22T06:43:26.123000Z';

function capture(): { stream: { write(text: string): boolean }; text(): string; lines(): string[] } {
  let buffer = '';
  return {
    stream: {
      write: (text: string) => {
        buffer += text;
        return true;
      },
    },
    text: () => buffer,
    lines: () => buffer.split('\n').filter((line) => line !== ''),
  };
}

function setup(options: Partial<LoggingOptions> = {}, deps: LoggingDeps = {}) {
  const out = capture();
  const logging = newLogging(options, DAEMON_SCOPES, { clock: new FakeClock(AT), stdout: out.stream, ...deps });
  return { out, logging };
}

/** The line this function is called from, to check caller info against. */
function lineHere(): number {
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, lineHere);
  const frame = (holder.stack ?? '').split('\n')[1] ?? '';
  return Number(/:(\d+):\d+\)?$/.exec(frame)?.[1]);
}

describe('levels per scope', () => {
  test('default:info,ads:debug lets debug through for ads only', () => {
    const { out, logging } = setup({ outputLevels: parseLevelSpec('default:info,ads:debug') });
    logging.scope('ads').debug('ads debug');
    logging.scope('model').debug('model debug');
    logging.scope('model').info('model info');
    logging.scope('default').debug('default debug');
    logging.scope('default').info('default info');
    expect(out.lines().map((line) => line.split('\t').slice(1).join(' '))).toEqual(['debug ads ads debug', 'info model model info', 'info default info']);
  });

  test('all:<level> sets every scope, including scopes registered later', () => {
    const { out, logging } = setup({ outputLevels: parseLevelSpec('all:error') });
    for (const name of ['ads', 'model', 'default', 'lazy']) {
      logging.scope(name).warn('hidden');
      logging.scope(name).error('shown');
    }
    expect(out.lines()).toHaveLength(4);
    expect(out.text()).not.toContain('hidden');
    expect(logging.listScopes().every((scope) => scope.outputLevel === 'error')).toBe(true);
  });

  test('a level for an unlisted scope waits for the scope to register', () => {
    const { out, logging } = setup({ outputLevels: parseLevelSpec('later:debug') });
    expect(logging.getScope('later')).toBeUndefined();
    const later = logging.scope('later', 'Registered late');
    later.debug('late debug');
    expect(out.lines()).toEqual([`${STAMP}\tdebug\tlater\tlate debug`]);
    expect(logging.getScope('later')).toEqual({
      name: 'later',
      description: 'Registered late',
      outputLevel: 'debug',
      stackTraceLevel: 'none',
      logCallers: false,
    });
  });

  test('the default scope is the fallback for scopes the spec does not name', () => {
    const { logging } = setup({ outputLevels: parseLevelSpec('warn,ads:debug') });
    expect(logging.getScope('model')?.outputLevel).toBe('warn');
    expect(logging.getScope('ads')?.outputLevel).toBe('debug');
    expect(logging.scope('model').isEnabled('info')).toBe(false);
    expect(logging.scope('model').isEnabled('warn')).toBe(true);
  });

  test('none silences a scope, fatal included', () => {
    const { out, logging } = setup({ outputLevels: parseLevelSpec('ads:none') });
    logging.scope('ads').fatal('not written');
    expect(out.text()).toBe('');
    expect(logging.scope('ads').isEnabled('fatal')).toBe(false);
  });

  test('fatal writes the entry and returns', () => {
    const { out, logging } = setup();
    logging.scope('ads').fatal('giving up');
    logging.scope('ads').info('still running');
    expect(out.lines()).toEqual([`${STAMP}\tfatal\tads\tgiving up`, `${STAMP}\tinfo\tads\tstill running`]);
  });
});

describe('run-time control', () => {
  test('setScope changes existing loggers and their with() children at once', () => {
    const { out, logging } = setup();
    const ads = logging.scope('ads');
    const bound = ads.with({ conn: 'c1' });
    ads.debug('before');
    bound.debug('before');
    expect(ads.isEnabled('debug')).toBe(false);
    const info = logging.setScope('ads', { outputLevel: 'debug' });
    expect(info).toEqual(expect.objectContaining({ name: 'ads', outputLevel: 'debug' }));
    expect(ads.isEnabled('debug')).toBe(true);
    ads.debug('after');
    bound.debug('after');
    logging.setScope('ads', { outputLevel: 'none' });
    ads.error('silenced');
    expect(out.lines()).toEqual([`${STAMP}\tdebug\tads\tafter`, `${STAMP}\tdebug\tads\tafter\tconn=c1`]);
  });

  test('setScope turns caller info and stack traces on and off', () => {
    const { out, logging } = setup();
    const ads = logging.scope('ads');
    logging.setScope('ads', { logCallers: true, stackTraceLevel: 'info' });
    ads.info('traced');
    const [first, ...stack] = out.text().trimEnd().split('\n');
    expect(first).toMatch(/\tads\tlog\/logging\.test\.ts:\d+\ttraced$/);
    expect(stack.length).toBeGreaterThan(0);
    expect(logging.getScope('ads')).toEqual(expect.objectContaining({ logCallers: true, stackTraceLevel: 'info' }));
  });

  test('unknown scopes and bad levels are refused', () => {
    const { logging } = setup();
    expect(() => logging.setScope('nosuch', { outputLevel: 'debug' })).toThrow(MeshError);
    expect(() => logging.setScope('nosuch', { outputLevel: 'debug' })).toThrow('unknown logging scope "nosuch"');
    expect(() => logging.setScope('ads', { outputLevel: 'loud' as never })).toThrow('invalid outputLevel "loud"');
    expect(logging.getScope('ads')?.outputLevel).toBe('info');
  });

  test('listScopes has the program scopes with descriptions, without the all pseudo-scope', () => {
    const { logging } = setup();
    const names = logging.listScopes().map((scope) => scope.name);
    expect(names).toEqual(DAEMON_SCOPES.map((scope) => scope.name).filter((name) => name !== 'all'));
    expect(logging.getScope('ads')?.description).toBe(DAEMON_SCOPES.find((scope) => scope.name === 'ads')?.description);
    expect(() => logging.scope('all')).toThrow('invalid logging scope name "all"');
    expect(() => logging.scope('a.b')).toThrow(MeshError);
  });
});

describe('output formats', () => {
  test('console: scope left out for default, fields bound with with()', () => {
    const { out, logging } = setup();
    logging.scope('default').info('starting');
    logging
      .scope('ads')
      .with({ proxy: 'sidecar~10.0.0.1' })
      .warn({ reason: 'config update', error: new Error('nack') }, 'push failed');
    expect(out.text()).toBe(`${STAMP}\tinfo\tstarting\n` + `${STAMP}\twarn\tads\tpush failed\tproxy=sidecar~10.0.0.1 reason="config update" error=nack\n`);
  });

  test('JSON: one object per line', () => {
    const { out, logging } = setup({ asJson: true });
    logging.scope('default').info('starting');
    logging.scope('ads').with({ proxy: 'p1' }).error({ count: 2, skipped: undefined }, 'push failed');
    expect(out.text()).toBe(
      `{"time":"${STAMP}","level":"info","msg":"starting"}\n` +
        `{"time":"${STAMP}","level":"error","scope":"ads","msg":"push failed","proxy":"p1","count":2}\n`,
    );
  });

  test('the time comes from the injected clock', () => {
    const clock = new FakeClock(AT);
    const out = capture();
    const logging = newLogging({}, [], { clock, stdout: out.stream });
    clock.advance(1500);
    logging.scope('default').info('later');
    expect(out.text()).toBe('2026-11-22T06:43:27.623000Z\tinfo\tlater\n');
  });
});

describe('caller info', () => {
  test('only for the --log_caller scopes, pointing at the calling line', () => {
    const { out, logging } = setup({ callerScopes: ['ads'] });
    const line = lineHere() + 1; // the call on the next line
    logging.scope('ads').info('with caller');
    logging.scope('model').info('without caller');
    const boundLine = lineHere() + 1;
    logging.scope('ads').with({ k: 'v' }).info('bound');
    expect(out.lines()).toEqual([
      `${STAMP}\tinfo\tads\tlog/logging.test.ts:${line}\twith caller`,
      `${STAMP}\tinfo\tmodel\twithout caller`,
      `${STAMP}\tinfo\tads\tlog/logging.test.ts:${boundLine}\tbound\tk=v`,
    ]);
  });

  test('in JSON as the caller key', () => {
    const { out, logging } = setup({ asJson: true, callerScopes: ['all'] });
    const line = lineHere() + 1;
    logging.scope('default').warn('here');
    expect(JSON.parse(out.text())).toEqual({ time: STAMP, level: 'warn', msg: 'here', caller: `log/logging.test.ts:${line}` });
  });
});

describe('stack traces', () => {
  test('only at or above the scope stack-trace level', () => {
    const { out, logging } = setup({ stackTraceLevels: parseLevelSpec('default:none,ads:error') });
    const ads = logging.scope('ads');
    ads.warn('no stack');
    logging.scope('model').error('no stack either');
    ads.error('with stack');
    const lines = out.text().split('\n');
    expect(lines.slice(0, 3)).toEqual([`${STAMP}\twarn\tads\tno stack`, `${STAMP}\terror\tmodel\tno stack either`, `${STAMP}\terror\tads\twith stack`]);
    expect(lines[3]).toMatch(/^at .*logging\.test\.ts:\d+:\d+\)?$/);
  });

  test('in JSON, with the stack of an Error field beside its message', () => {
    const { out, logging } = setup({ asJson: true, stackTraceLevels: parseLevelSpec('warn') });
    const failure = new Error('disk full');
    logging.scope('default').info({ err: failure }, 'below');
    logging.scope('default').fatal({ err: failure }, 'above');
    const [below, above] = out.lines().map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(below).toEqual({ time: STAMP, level: 'info', msg: 'below', err: 'disk full' });
    expect(above).toEqual(
      expect.objectContaining({ level: 'fatal', err: 'disk full', errStack: failure.stack, stack: expect.stringContaining('logging.test.ts') }),
    );
    expect(String(above?.['stack']).split('\n')[0]).toMatch(/^at .*logging\.test\.ts:\d+:\d+\)?$/);
  });
});

describe('targets', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mesh-log-targets-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  test('stdout, stderr and a file all receive every entry; the file is appended to', async () => {
    const file = join(dir, 'app.log');
    writeFileSync(file, 'earlier\n');
    const err = capture();
    const { out, logging } = setup({ targets: ['stdout', 'stderr', file] }, { stderr: err.stream });
    logging.scope('ads').info('one');
    logging.scope('default').error({ n: 2 }, 'two');
    const expected = `${STAMP}\tinfo\tads\tone\n${STAMP}\terror\ttwo\tn=2\n`;
    expect(out.text()).toBe(expected);
    expect(err.text()).toBe(expected);
    expect(readFileSync(file, 'utf8')).toBe(`earlier\n${expected}`);

    await logging.close();
    logging.scope('ads').info('after close');
    expect(readFileSync(file, 'utf8')).toBe(`earlier\n${expected}`);
    expect(out.text()).toContain('after close');
  });

  test('no stdout target, no stdout output', () => {
    const file = join(dir, 'only.log');
    const { out, logging } = setup({ targets: [file] });
    logging.scope('ads').info('to the file');
    expect(out.text()).toBe('');
    expect(readFileSync(file, 'utf8')).toBe(`${STAMP}\tinfo\tads\tto the file\n`);
    return logging.close();
  });

  test('a target that cannot be opened is a usage error', () => {
    const bad = join(dir, 'missing', 'app.log');
    expect(() => setup({ targets: [bad] })).toThrow(UsageError);
    expect(() => setup({ targets: [bad] })).toThrow(`invalid --log_target "${bad}": cannot open: ENOENT`);
  });

  test('a failing target is reported on stderr and does not stop the others', () => {
    const err = capture();
    const out = capture();
    const broken = {
      write: (): never => {
        throw new Error('EPIPE');
      },
    };
    const logging = newLogging({ targets: ['stdout', 'stderr'] }, [], { clock: new FakeClock(AT), stdout: broken, stderr: err.stream });
    logging.scope('default').info('kept');
    expect(err.text()).toBe(`${STAMP}\terror\tlog write to stdout failed: EPIPE\n${STAMP}\tinfo\tkept\n`);
    expect(out.text()).toBe('');
  });
});
