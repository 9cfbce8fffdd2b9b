import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Option, type Command } from 'commander';
import type { CliIo } from '../run-cli.js';

/**
 * The charts and profiles shipped with meshctl: `deploy/` of the project, the nearest ancestor of
 * this module that has one (from the sources, the transpiled build or the bundle).
 */
function shippedManifests(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = dirname(dir)) {
    const deploy = join(dir, 'deploy');
    if (existsSync(join(deploy, 'charts')) && existsSync(join(deploy, 'profiles'))) return deploy;
    if (dirname(dir) === dir) return resolve(here, '../../deploy');
  }
}

export interface ManifestFlags {
  manifests?: string;
  charts?: string;
  filename?: string[];
  set?: string[];
  revision: string;
}

export const manifestsOption = (): Option =>
  new Option('-d, --manifests <string>', 'Specify a path to a directory of charts and profiles (e.g. ~/Downloads/mesh/deploy)');
export const chartsOption = (): Option => new Option('--charts <string>', 'Deprecated, use --manifests instead').hideHelp();
export const manifestsOf = (flags: Pick<ManifestFlags, 'manifests' | 'charts'>): string => flags.manifests ?? flags.charts ?? shippedManifests();

/** The install family's packages, loaded when a command runs. */
export async function loadInstall(): Promise<typeof import('../../meshctl/index.js') & typeof import('../../install/index.js')> {
  const [meshctl, install] = await Promise.all([import('../../meshctl/index.js'), import('../../install/index.js')]);
  return { ...meshctl, ...install };
}

/** `--force`: validation errors of the configuration are warnings on stderr, one per error (the reference's text). */
export const forceOf = (io: CliIo, force: boolean): { force?: { warn: (line: string) => void } } =>
  force ? { force: { warn: (line) => io.stderr(`${line}\n`) } } : {};

/** `manifest --dry-run`: the group's flag, which its install and generate honour as their own. */
export const groupDryRun = (command: Command): boolean => command.parent?.opts<{ dryRun?: boolean }>().dryRun === true;
