import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import { formatBuildInfo, readBuildInfo, type BuildInfo } from './version.js';

const TESTDATA = fileURLToPath(new URL('./testdata/version/', import.meta.url));

const INFO: BuildInfo = {
  version: '0.1.0',
  gitRevision: 'abc123',
  nodeVersion: 'v20.20.0',
  buildStatus: 'Clean',
  gitTag: '0.1.0',
};

describe('readBuildInfo', () => {
  test('reads the version of the project this module belongs to', () => {
    const projectPackage = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8')) as { version: string };
    const info = readBuildInfo();
    expect(info.version).toBe(projectPackage.version);
    expect(info.gitTag).toBe(projectPackage.version);
    expect(info.nodeVersion).toBe(process.version);
  });

  test('walks up to the nearest package.json and reads build-info.json beside it', () => {
    expect(readBuildInfo({ from: `${TESTDATA}stamped/lib/deeper` })).toEqual({
      version: '1.2.3',
      gitRevision: '0123456789abcdef0123456789abcdef01234567',
      nodeVersion: process.version,
      buildStatus: 'Clean',
      gitTag: '1.2.3',
    });
  });

  test('says unknown for the revision and status when no build-info.json was written', () => {
    expect(readBuildInfo({ from: `${TESTDATA}unstamped` })).toEqual({
      version: '2.0.0-alpha.1',
      gitRevision: 'unknown',
      nodeVersion: process.version,
      buildStatus: 'unknown',
      gitTag: '2.0.0-alpha.1',
    });
  });
});

describe('formatBuildInfo', () => {
  test('short is the version only', () => {
    expect(formatBuildInfo(INFO, 'short')).toBe('0.1.0');
  });

  test('long is one line in the reference shape', () => {
    expect(formatBuildInfo(INFO, 'long')).toBe(
      'version.BuildInfo{Version:"0.1.0", GitRevision:"abc123", NodeVersion:"v20.20.0", BuildStatus:"Clean", GitTag:"0.1.0"}',
    );
  });

  test('long quotes values', () => {
    expect(formatBuildInfo({ ...INFO, gitRevision: 'a"b' }, 'long')).toContain('GitRevision:"a\\"b"');
  });

  test('json and yaml carry every field and nothing else', () => {
    const withExtra = { ...INFO, extra: 'dropped' } as BuildInfo;
    expect(JSON.parse(formatBuildInfo(withExtra, 'json'))).toEqual(INFO);
    expect(parse(formatBuildInfo(withExtra, 'yaml'))).toEqual(INFO);
    expect(formatBuildInfo(INFO, 'yaml')).toBe('version: 0.1.0\ngitRevision: abc123\nnodeVersion: v20.20.0\nbuildStatus: Clean\ngitTag: 0.1.0');
  });
});
