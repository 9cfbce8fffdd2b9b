// A small program for flag-reads.test.ts: flags read directly, through a copy handed on, through
// a group's optsWithGlobals, and two that nothing reads.
import { Command } from 'commander';

interface RunFlags {
  direct: string;
  copied: string;
  ignored: boolean;
}

function consume(options: { readonly copied: string }): string {
  return options.copied;
}

/** The program; what its one action saw goes to `seen`. */
export function buildFlagFixture(seen: string[] = []): Command {
  const program = new Command('fixture').option('--group <string>', 'read by a subcommand through optsWithGlobals', '');
  program.addCommand(
    new Command('run')
      .option('--direct <string>', 'read from the options', '')
      .option('--copied <string>', 'read from a copy', '')
      .option('--ignored', 'declared and never read', false)
      .option('--undeclared', 'not even in the options type', false)
      .action((flags: RunFlags, command: Command) => {
        seen.push(flags.direct, consume({ ...flags }), command.optsWithGlobals<{ group: string }>().group);
      }),
  );
  return program;
}
