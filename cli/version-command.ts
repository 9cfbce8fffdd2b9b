import { Command, Option } from 'commander';
import { formatBuildInfo, readBuildInfo, type BuildInfo } from '../runtime/index.js';
import { boolOption } from './flags.js';
import type { CliIo } from './run-cli.js';

export interface VersionOptions {
  output?: 'yaml' | 'json';
  short: boolean;
}

/** `-o/--output` and `-s/--short` (a Go bool flag: `--short=false` works); meshctl's `version` defaults to short. */
export function versionOptions(command: Command, shortByDefault = false): Command {
  return command
    .addOption(new Option('-o, --output <format>', "One of 'yaml' or 'json'.").choices(['yaml', 'json']))
    .addOption(boolOption('-s, --short', 'Use --short=false to generate full version information', shortByDefault));
}

export function renderVersion(info: BuildInfo, options: VersionOptions): string {
  if (options.output) return formatBuildInfo(info, options.output);
  return formatBuildInfo(info, options.short ? 'short' : 'long');
}

/** `version` for pilot-discovery and pilot-agent: local build information only. */
export function newVersionCommand(io: CliIo): Command {
  return versionOptions(new Command('version').description('Prints out build version information')).action((options: VersionOptions) => {
    io.stdout(ensureNewline(renderVersion(readBuildInfo(), options)));
  });
}

export function ensureNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}
