import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

export interface BuildInfo {
  version: string;
  gitRevision: string;
  nodeVersion: string;
  /** `Clean` for a build from an unmodified tree, `unknown` when nobody recorded it. */
  buildStatus: string;
  gitTag: string;
}

export type BuildInfoFormat = 'short' | 'long' | 'json' | 'yaml';

const UNKNOWN = 'unknown';

/**
 * The build information of this installation: the version from the project's package.json
 * (the nearest one above `from`, by default this module's folder), the git revision and build
 * status from a `build-info.json` written beside it at build time.
 */
export function readBuildInfo(options: { from?: string } = {}): BuildInfo {
  const packageDir = findPackageDir(options.from ?? dirname(fileURLToPath(import.meta.url)));
  const version = packageDir ? stringField(readJson(join(packageDir, 'package.json')), 'version') : undefined;
  const stamp = packageDir ? readJson(join(packageDir, 'build-info.json')) : undefined;
  const gitRevision = stringField(stamp, 'gitRevision');
  return {
    version: version ?? UNKNOWN,
    gitRevision: gitRevision ?? UNKNOWN,
    nodeVersion: process.version,
    buildStatus: stringField(stamp, 'buildStatus') ?? (gitRevision ? 'Clean' : UNKNOWN),
    gitTag: version ?? UNKNOWN,
  };
}

/**
 * short: the version only; long: one line in the reference's `%#v` shape; json and yaml: the
 * fields as they are. No trailing newline.
 */
export function formatBuildInfo(info: BuildInfo, output: BuildInfoFormat): string {
  switch (output) {
    case 'short':
      return info.version;
    case 'long': {
      const fields = [
        ['Version', info.version],
        ['GitRevision', info.gitRevision],
        ['NodeVersion', info.nodeVersion],
        ['BuildStatus', info.buildStatus],
        ['GitTag', info.gitTag],
      ].map(([key, value]) => `${key}:${JSON.stringify(value)}`);
      return `version.BuildInfo{${fields.join(', ')}}`;
    }
    case 'json':
      return JSON.stringify(buildInfoFields(info), null, 2);
    case 'yaml':
      return stringify(buildInfoFields(info)).trimEnd();
  }
}

/** A copy with exactly the BuildInfo fields, in a stable order. */
function buildInfoFields(info: BuildInfo): BuildInfo {
  return {
    version: info.version,
    gitRevision: info.gitRevision,
    nodeVersion: info.nodeVersion,
    buildStatus: info.buildStatus,
    gitTag: info.gitTag,
  };
}

function findPackageDir(start: string): string | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    if (stringField(readJson(join(dir, 'package.json')), 'version') !== undefined) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

function readJson(path: string): unknown {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function stringField(value: unknown, key: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'string' && field !== '' ? field : undefined;
}
