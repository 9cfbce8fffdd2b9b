import { describe, expect, test } from '@jest/globals';
import { Command, CommanderError } from 'commander';
import { UsageError } from '../errors.js';
import { addLoggingFlags, loggingOptionsFrom } from './logging-flags.js';
import { DEFAULT_LOGGING_OPTIONS } from './options.js';

function command(): Command {
  const cmd = new Command('discovery').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  cmd.configureHelp({ helpWidth: 300 });
  return addLoggingFlags(cmd).action(() => undefined);
}

describe('addLoggingFlags', () => {
  test('help shows the nine flags with the seed meanings and defaults', () => {
    const lines = command()
      .helpInformation()
      .split('\n')
      .map((line) => line.trim().replace(/\s{2,}/g, '  '))
      .filter((line) => line.startsWith('--log_'));
    expect(lines).toEqual([
      '--log_as_json  JSON output instead of console format (default: false)',
      '--log_caller <string>  Comma-separated scopes that include caller info (default: "")',
      '--log_output_level <string>  <scope>:<level>,... minimum levels (default: "default:info")',
      '--log_rotate <string>  Path of optional rotating log file (default: "")',
      '--log_rotate_max_age <int>  Days before rotation; 0 no limit (default: 30)',
      '--log_rotate_max_backups <int>  Backups kept; 0 no limit (default: 1000)',
      '--log_rotate_max_size <int>  Rotation size (megabytes as stated) (default: 104857600)',
      '--log_stacktrace_level <string>  <scope>:<level>,... levels that capture stack traces (default: "default:none")',
      '--log_target <stringArray>  Output paths; stdout and stderr are special (default: [stdout])',
    ]);
  });

  test('no flags give the default options', () => {
    const cmd = command().parse([], { from: 'user' });
    expect(loggingOptionsFrom(cmd.opts())).toEqual(DEFAULT_LOGGING_OPTIONS);
  });

  test('parses every flag; --log_target repeats and replaces the default', () => {
    const cmd = command().parse(
      [
        '--log_as_json',
        '--log_caller=ads,model',
        '--log_output_level',
        'default:warn,ads:debug',
        '--log_rotate',
        '/var/log/mesh.log',
        '--log_rotate_max_age=7',
        '--log_rotate_max_backups',
        '0',
        '--log_rotate_max_size',
        '5',
        '--log_stacktrace_level=error',
        '--log_target',
        'stderr',
        '--log_target',
        '/tmp/a,b.log',
      ],
      { from: 'user' },
    );
    expect(loggingOptionsFrom(cmd.opts())).toEqual({
      asJson: true,
      callerScopes: ['ads', 'model'],
      outputLevels: new Map([
        ['default', 'warn'],
        ['ads', 'debug'],
      ]),
      rotatePath: '/var/log/mesh.log',
      rotateMaxAgeDays: 7,
      rotateMaxBackups: 0,
      rotateMaxSizeMb: 5,
      stackTraceLevels: new Map([['default', 'error']]),
      targets: ['stderr', '/tmp/a,b.log'],
    });
  });

  test('a second parse of the same command starts from the default target again', () => {
    const cmd = command();
    cmd.parse(['--log_target', 'stderr', '--log_target', 'a.log'], { from: 'user' });
    expect(loggingOptionsFrom(cmd.opts()).targets).toEqual(['stderr', 'a.log']);
    cmd.parse(['--log_target', 'b.log'], { from: 'user' });
    expect(loggingOptionsFrom(cmd.opts()).targets).toEqual(['b.log']);
    cmd.parse([], { from: 'user' });
    expect(loggingOptionsFrom(cmd.opts()).targets).toEqual(['stdout']);
  });

  test('--log_as_json takes no value', () => {
    expect(() => command().parse(['--log_as_json', 'true'], { from: 'user' })).toThrow(CommanderError);
  });

  test.each([['abc'], ['-1'], ['1.5']])('rejects --log_rotate_max_age %s', (value) => {
    expect(() => command().parse(['--log_rotate_max_age', value], { from: 'user' })).toThrow(`expected a non-negative integer, got "${value}"`);
  });
});

describe('loggingOptionsFrom', () => {
  test.each([
    [{ log_output_level: 'ads:loud' }, 'invalid --log_output_level "ads:loud": level must be one of debug, info, warn, error, fatal, none'],
    [{ log_stacktrace_level: 'a:b:c' }, 'invalid --log_stacktrace_level "a:b:c": expected <scope>:<level> or <level>'],
    [{ log_caller: 'ads,x:y' }, 'invalid --log_caller "x:y": expected comma-separated scope names'],
    [{ log_rotate_max_backups: '-1' }, 'invalid --log_rotate_max_backups "-1": expected a non-negative integer'],
    [{ log_rotate_max_size: 1.5 }, 'invalid --log_rotate_max_size "1.5": expected a non-negative integer'],
    [{ log_rotate_max_age: 'ten' }, 'invalid --log_rotate_max_age "ten": expected a non-negative integer'],
    [{ log_target: [''] }, 'invalid --log_target "": expected stdout, stderr or a file path'],
    [{ log_as_json: 'yes' }, 'invalid --log_as_json "yes": expected true or false'],
  ])('rejects %j', (values, message) => {
    expect(() => loggingOptionsFrom(values)).toThrow(UsageError);
    expect(() => loggingOptionsFrom(values)).toThrow(message);
  });

  test('accepts integers given as strings and a single target as a string', () => {
    const options = loggingOptionsFrom({ log_rotate_max_age: '12', log_target: 'stderr' });
    expect(options.rotateMaxAgeDays).toBe(12);
    expect(options.targets).toEqual(['stderr']);
  });
});
