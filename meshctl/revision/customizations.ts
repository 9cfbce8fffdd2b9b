import { buildOperatorConfig, type MeshOperatorSpec } from '../../install/index.js';

/**
 * What an installation sets beyond its profile, as `path=value` lines (the paths `--set` takes):
 * every leaf of the recorded spec whose value the profile alone would not give. The profile's name
 * and the revision are the installation's identity, not customizations.
 */
export function customizationsOf(spec: MeshOperatorSpec, manifestsDir: string): string[] {
  const profile = buildOperatorConfig({ manifestsDir, files: [], sets: [], profile: spec.profile ?? 'default' }).spec ?? {};
  const base = new Map(leaves(profile, []).map(([path, value]) => [path, JSON.stringify(value)]));
  return leaves(spec, [])
    .filter(([path, value]) => path !== 'profile' && path !== 'revision' && base.get(path) !== JSON.stringify(value))
    .map(([path, value]) => `${path}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .sort();
}

function leaves(value: unknown, path: readonly string[]): [string, unknown][] {
  if (Array.isArray(value)) {
    if (value.length === 0) return [[path.join('.'), []]];
    return value.flatMap((item, i) => leaves(item, [...path.slice(0, -1), `${path.at(-1) ?? ''}[${i}]`]));
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) return [[path.join('.'), {}]];
    return entries.flatMap(([key, child]) => leaves(child, [...path, key.includes('.') ? key.replaceAll('.', '\\.') : key]));
  }
  return [[path.join('.'), value]];
}
