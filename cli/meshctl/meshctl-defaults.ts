import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { errorCode, errorMessage, UsageError, type Settings } from '../../runtime/index.js';

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

/** The flags MESHCONFIG and MESHCTL_* give defaults to, each with its setting (seed 3's table). */
export const SETTABLE_FLAGS = [
  ['authority', 'MESHCTL_AUTHORITY'],
  ['cert-dir', 'MESHCTL_CERT_DIR'],
  ['insecure', 'MESHCTL_INSECURE'],
  ['meshNamespace', 'MESHCTL_MESHNAMESPACE'],
  ['plaintext', 'MESHCTL_PLAINTEXT'],
  ['prefer-experimental', 'MESHCTL_PREFER_EXPERIMENTAL'],
  ['xds-address', 'MESHCTL_XDS_ADDRESS'],
  ['xds-port', 'MESHCTL_XDS_PORT'],
] as const satisfies readonly (readonly [keyof MeshctlDefaults, string])[];

export type SettableFlag = (typeof SETTABLE_FLAGS)[number][0];

/** A flag's default and where it came from: `$MESHCTL_…`, the MESHCONFIG file's path, or `default`. */
export interface FlagDefault {
  readonly value: string;
  readonly from: string;
}

/**
 * The defaults of the settable flags, as the reference orders their sources: a flag on the
 * command line wins (commander's part), then the environment, then the MESHCONFIG file, then the
 * built-in default. A file value of the wrong type is a usage error naming the file and the key.
 */
export interface MeshctlFlagDefaults {
  of(flag: SettableFlag): FlagDefault;
  string(flag: SettableFlag): string;
  boolean(flag: 'insecure' | 'plaintext' | 'prefer-experimental'): boolean;
  port(flag: 'xds-port'): number;
}

export function meshctlFlagDefaults(settings: Settings<'meshctl'>, file: MeshctlDefaults): MeshctlFlagDefaults {
  const path = settings.get('MESHCONFIG');
  const of = (flag: SettableFlag): FlagDefault => {
    const setting = SETTABLE_FLAGS.find(([name]) => name === flag)?.[1] as (typeof SETTABLE_FLAGS)[number][1];
    if (settings.isSet(setting)) return { value: String(settings.get(setting)), from: `$${setting}` };
    const fromFile = file[flag];
    if (fromFile !== undefined) return { value: fromFile, from: path };
    return { value: String(settings.get(setting)), from: 'default' };
  };
  const invalid = (flag: SettableFlag, value: string, expected: string): UsageError =>
    new UsageError(`MESHCONFIG file ${path}: ${flag}: expected ${expected}, got "${value}"`);
  return {
    of,
    string: (flag) => of(flag).value,
    boolean: (flag) => {
      const { value } = of(flag);
      if (value !== 'true' && value !== 'false') throw invalid(flag, value, 'true or false');
      return value === 'true';
    },
    port: (flag) => {
      const { value } = of(flag);
      const port = Number(value);
      if (!/^\d+$/.test(value) || port < 1 || port > 65535) throw invalid(flag, value, 'a port from 1 to 65535');
      return port;
    },
  };
}
