import { Command, type Option } from 'commander';
import type { Settings } from '../../runtime/index.js';
import type { MeshctlDefaults } from './meshctl-defaults.js';
import type { CliIo } from '../run-cli.js';

/** The flags MESHCONFIG and MESHCTL_* give defaults to, each with its setting (seed 3's table). */
const SETTABLE = [
  ['authority', 'MESHCTL_AUTHORITY'],
  ['cert-dir', 'MESHCTL_CERT_DIR'],
  ['insecure', 'MESHCTL_INSECURE'],
  ['meshNamespace', 'MESHCTL_MESHNAMESPACE'],
  ['plaintext', 'MESHCTL_PLAINTEXT'],
  ['prefer-experimental', 'MESHCTL_PREFER_EXPERIMENTAL'],
  ['xds-address', 'MESHCTL_XDS_ADDRESS'],
  ['xds-port', 'MESHCTL_XDS_PORT'],
] as const satisfies readonly (readonly [keyof MeshctlDefaults, string])[];

/** `meshctl options`: the global flags, as the reference prints them. */
export function newMeshctlOptionsCommand(io: CliIo): Command {
  return new Command('options').description('Displays meshctl global options').action(async (_options: unknown, command: Command) => {
    const root = command.parent ?? command;
    const { renderGlobalOptions } = await import('../../meshctl/index.js');
    io.stdout(renderGlobalOptions(root.options.map(flagUsage)));
  });
}

function flagUsage(option: Option): import('../../meshctl/index.js').FlagUsage {
  const varname = /<([^>]+)>/.exec(option.flags)?.[1] ?? '';
  const defaultValue = option.defaultValue as string | number | boolean | undefined;
  return {
    ...(option.short !== undefined ? { short: option.short.replace(/^-/, '') } : {}),
    long: (option.long ?? '').replace(/^--/, ''),
    varname,
    usage: option.description,
    ...(defaultValue !== undefined ? { defaultValue } : {}),
  };
}

/** `meshctl experimental config list`: each configurable default, its value and where it comes from. */
export function newMeshctlConfigCommand(io: CliIo, settings: Settings<'meshctl'>, fileDefaults: MeshctlDefaults): Command {
  const config = new Command('config')
    .description('Configure meshctl defaults')
    .addHelpText('after', '\nExamples:\n  # list configuration parameters\n  meshctl experimental config list\n');
  config.addCommand(
    new Command('list').description('List mesh configurable defaults').action(async () => {
      const { renderConfigList } = await import('../../meshctl/index.js');
      const path = settings.get('MESHCONFIG');
      const rows = SETTABLE.map(([flag, setting]) => {
        // The environment wins over the file, which wins over the built-in default.
        if (settings.isSet(setting)) return { flag, value: String(settings.get(setting)), from: `$${setting}` };
        const fromFile = fileDefaults[flag];
        if (fromFile !== undefined) return { flag, value: fromFile, from: path };
        return { flag, value: String(settings.get(setting)), from: 'default' };
      });
      io.stdout(renderConfigList(rows));
    }),
  );
  return config;
}
