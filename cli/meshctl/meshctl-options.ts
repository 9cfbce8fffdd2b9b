import { Command, type Option } from 'commander';
import { SETTABLE_FLAGS, type MeshctlFlagDefaults } from './meshctl-defaults.js';
import type { CliIo } from '../run-cli.js';

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
export function newMeshctlConfigCommand(io: CliIo, defaults: MeshctlFlagDefaults): Command {
  const config = new Command('config')
    .description('Configure meshctl defaults')
    .addHelpText('after', '\nExamples:\n  # list configuration parameters\n  meshctl experimental config list\n');
  config.addCommand(
    new Command('list').description('List mesh configurable defaults').action(async () => {
      const { renderConfigList } = await import('../../meshctl/index.js');
      io.stdout(renderConfigList(SETTABLE_FLAGS.map(([flag]) => ({ flag, ...defaults.of(flag) }))));
    }),
  );
  return config;
}
