import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { errorCode, errorMessage, UsageError } from '../../runtime/index.js';

/** Flag defaults from the MESHCONFIG file (`$HOME/.meshctl/config.yaml`); absent file, no defaults. */
export type MeshctlDefaults = Partial<
  Record<
    | 'context'
    | 'meshNamespace'
    | 'orchconfig'
    | 'namespace'
    | 'xds-address'
    | 'xds-port'
    | 'cert-dir'
    | 'authority'
    | 'insecure'
    | 'plaintext'
    | 'prefer-experimental',
    string
  >
>;

const KNOWN_KEYS = new Set([
  'context',
  'meshNamespace',
  'orchconfig',
  'namespace',
  'xds-address',
  'xds-port',
  'cert-dir',
  'authority',
  'insecure',
  'plaintext',
  'prefer-experimental',
]);

export function readMeshctlDefaults(path: string): MeshctlDefaults {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return {};
    throw new UsageError(`cannot read MESHCONFIG file ${path}: ${errorMessage(error)}`);
  }
  let document: unknown;
  try {
    document = parse(text) ?? {};
  } catch (error) {
    throw new UsageError(`MESHCONFIG file ${path} is not valid YAML: ${errorMessage(error)}`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new UsageError(`MESHCONFIG file ${path} must hold a map of flag names to values`);
  }
  const defaults: MeshctlDefaults = {};
  for (const [key, value] of Object.entries(document)) {
    if (!KNOWN_KEYS.has(key)) {
      throw new UsageError(`MESHCONFIG file ${path}: unknown key "${key}", expected one of ${[...KNOWN_KEYS].join(', ')}`);
    }
    defaults[key as keyof MeshctlDefaults] = String(value);
  }
  return defaults;
}
