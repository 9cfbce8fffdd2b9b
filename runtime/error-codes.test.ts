import { describe, expect, test } from '@jest/globals';
import { ERROR_CODES } from './error-codes.js';
import { errorCode, errorMessage, MeshError, TerminalError, UsageError } from './errors.js';

describe('the error catalogue', () => {
  const all = Object.values(ERROR_CODES).flat();

  test('every code is kebab-case', () => {
    const misspelled = all.filter((code) => !/^[a-z]+(-[a-z0-9]+)*$/.test(code));
    expect(misspelled).toEqual([]);
  });

  test('no code belongs to two areas', () => {
    const repeated = all.filter((code, index) => all.indexOf(code) !== index);
    expect(repeated).toEqual([]);
  });

  test('the base errors carry catalogue codes and their own class name', () => {
    expect(new TerminalError('bad spec')).toMatchObject({ code: 'terminal', name: 'TerminalError', issues: [] });
    expect(new UsageError('bad flag')).toMatchObject({ code: 'usage', name: 'UsageError', exitCode: 2 });
    expect(all).toEqual(expect.arrayContaining(['terminal', 'usage']));
    const cause = new Error('disk full');
    expect(new MeshError('listen-failed', 'cannot listen', { cause }).cause).toBe(cause);
  });

  test('a TerminalError keeps the validation issues and the cause', () => {
    const cause = new MeshError('invalid-mesh-config', 'invalid mesh config');
    const issues = [{ path: 'spec.selector', message: 'must not be empty' }];
    const error = new TerminalError('Sidecar default/x is invalid', { cause, issues });
    expect(error).toMatchObject({ message: 'Sidecar default/x is invalid', issues, cause });
    expect('cause' in new TerminalError('no cause', { issues })).toBe(false);
  });
});

describe('errorMessage', () => {
  test('an error gives its message, anything else its text', () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage('plain words')).toBe('plain words');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
  });

  test('an error from another realm is still an error', async () => {
    const { runInNewContext } = await import('node:vm');
    const foreign: unknown = runInNewContext('new Error("from a VM")');
    expect(foreign instanceof Error).toBe(false);
    expect(errorMessage(foreign)).toBe('from a VM');
  });
});

describe('errorCode', () => {
  test('a system error or a MeshError gives its code, anything else nothing', async () => {
    const { readFile } = await import('node:fs/promises');
    const missing: unknown = await readFile('/nonexistent/file').catch((error: unknown) => error);
    expect(errorCode(missing)).toBe('ENOENT');
    expect(errorCode(new MeshError('listen-failed', 'cannot listen'))).toBe('listen-failed');
    expect(errorCode(new Error('boom'))).toBeUndefined();
    expect(errorCode({ code: 404 })).toBeUndefined();
    expect(errorCode('ENOENT')).toBeUndefined();
    expect(errorCode(null)).toBeUndefined();
  });
});
