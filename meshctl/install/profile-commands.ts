import { existsSync } from 'node:fs';
import { createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';
import { UsageError } from '../../runtime/index.js';
import { EXIT_USAGE, buildOperatorConfig, listProfiles, type MeshOperator } from '../../install/index.js';

export type DumpFormat = 'yaml' | 'json' | 'flags';

/** `profile list`: the reference's heading and four-space indent. */
export function renderProfileList(manifestsDir: string): string {
  return `Mesh configuration profiles:\n${listProfiles(manifestsDir)
    .map((name) => `    ${name}\n`)
    .join('')}`;
}

/**
 * `profile dump [profile]`: the merged configuration as YAML, JSON or `--set` flags. `--config-path`
 * (relative to the spec, as the reference's) dumps one part; flags are spec paths, as `--set` takes them.
 */
export function renderProfileDump(config: MeshOperator, format: DumpFormat, configPath: string): string {
  const spec = config.spec ?? {};
  const selected = configPath === '' ? (format === 'flags' ? spec : config) : pick(spec, configPath);
  if (format === 'json') return `${JSON.stringify(selected, null, 2)}\n`;
  if (format === 'flags') {
    const prefix = configPath === '' ? [] : configPath.split('.');
    return leaves(selected, prefix)
      .map(([path, value]) => `--set ${path.map((p) => p.replaceAll('.', '\\.')).join('.')}=${typeof value === 'string' ? value : JSON.stringify(value)}\n`)
      .join('');
  }
  return stringify(selected, { lineWidth: 0 });
}

/** `profile diff a b`: each side a profile name or a file; a unified diff of their dumps. */
export function renderProfileDiff(manifestsDir: string, left: string, right: string): string {
  const dump = (side: string): string => {
    const inputs = existsSync(side) ? { manifestsDir, files: [side], sets: [] } : { manifestsDir, files: [], sets: [], profile: side };
    return renderProfileDump(buildOperatorConfig(inputs), 'yaml', '');
  };
  const [a, b] = [dump(left), dump(right)];
  if (a === b) return 'Profiles are identical\n';
  return `The difference between profiles:\n${createTwoFilesPatch(left, right, a, b, '', '', { context: 3 })}`;
}

function pick(value: unknown, path: string): unknown {
  let node: unknown = value;
  for (const key of path.split('.')) {
    if (typeof node !== 'object' || node === null || !(key in node)) throw new UsageError(`--config-path ${path}: no "${key}" there`, { exitCode: EXIT_USAGE });
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function leaves(value: unknown, path: string[]): [string[], unknown][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => leaves(item, [...path.slice(0, -1), `${path.at(-1) ?? ''}[${i}]`]));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return [[path, {}]];
    return entries.flatMap(([key, child]) => leaves(child, [...path, key]));
  }
  return [[path, value]];
}
