import { describe, expect, test } from '@jest/globals';
import { UsageError } from '../errors.js';
import { callersFor, levelFor, parseLevelSpec, parseScopeList } from './level-spec.js';

describe('parseLevelSpec', () => {
  test.each([
    ['default:info', [['default', 'info']]],
    ['debug', [['default', 'debug']]],
    [
      'default:info,ads:debug',
      [
        ['default', 'info'],
        ['ads', 'debug'],
      ],
    ],
    [
      ' ads:warn , model:none ,',
      [
        ['ads', 'warn'],
        ['model', 'none'],
      ],
    ],
    [
      'ads:debug,model:info,ads:error',
      [
        ['model', 'info'],
        ['ads', 'error'],
      ],
    ],
    ['all:fatal', [['all', 'fatal']]],
    ['', []],
  ])('%j', (text, expected) => {
    expect([...parseLevelSpec(text)]).toEqual(expected);
  });

  test.each([
    ['ads:loud', '--log_output_level', 'invalid --log_output_level "ads:loud": level must be one of debug, info, warn, error, fatal, none'],
    ['loud', '--log_output_level', 'invalid --log_output_level "loud": level must be one of debug, info, warn, error, fatal, none'],
    ['ads:INFO', '--log_stacktrace_level', 'invalid --log_stacktrace_level "ads:INFO": level must be one of debug, info, warn, error, fatal, none'],
    ['a:b:c', '--log_output_level', 'invalid --log_output_level "a:b:c": expected <scope>:<level> or <level>'],
    [':debug', '--log_output_level', 'invalid --log_output_level ":debug": expected <scope>:<level> with a scope name of letters, digits, - or _'],
    ['a.b:debug', '--log_output_level', 'invalid --log_output_level "a.b:debug": expected <scope>:<level> with a scope name of letters, digits, - or _'],
  ])('rejects %j for %s', (text, flag, message) => {
    expect(() => parseLevelSpec(text, flag)).toThrow(UsageError);
    expect(() => parseLevelSpec(text, flag)).toThrow(message);
  });
});

describe('levelFor', () => {
  test.each([
    ['default:info,ads:debug', 'ads', 'debug'],
    ['default:info,ads:debug', 'model', 'info'],
    ['default:warn', 'model', 'warn'],
    ['ads:debug', 'model', 'info'],
    ['all:error', 'ads', 'error'],
    ['all:error,ads:debug', 'ads', 'debug'],
    ['ads:debug,all:error', 'ads', 'error'],
    ['all:error,default:debug', 'default', 'debug'],
    ['all:error,default:debug', 'model', 'error'],
  ])('%s gives %s %s', (spec, scope, level) => {
    expect(levelFor(parseLevelSpec(spec), scope, 'info')).toBe(level);
  });
});

describe('parseScopeList', () => {
  test('splits, trims and removes duplicates', () => {
    expect(parseScopeList(' ads,model,,ads ')).toEqual(['ads', 'model']);
    expect(parseScopeList('')).toEqual([]);
  });

  test('rejects names the spec syntax cannot hold', () => {
    expect(() => parseScopeList('ads,a:b')).toThrow('invalid --log_caller "a:b": expected comma-separated scope names');
  });

  test('all turns callers on for every scope', () => {
    expect(callersFor(['all'], 'model')).toBe(true);
    expect(callersFor(['ads'], 'ads')).toBe(true);
    expect(callersFor(['ads'], 'model')).toBe(false);
  });
});
