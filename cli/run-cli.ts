import { CommanderError, type Command } from 'commander';
import { ExitStatus, UsageError, errorMessage } from '../runtime/index.js';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/**
 * Parses and runs a program, turning every failure into the exit code users rely on:
 * 0 success or help, 2 a usage error (bad flag, bad setting, unknown command), 1 anything else.
 */
export async function runProgram(program: Command, argv: readonly string[], io: CliIo = processIo): Promise<number> {
  configureForExitCodes(program, io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    return exitCodeFor(error, io);
  }
}

function configureForExitCodes(command: Command, io: CliIo): void {
  command.exitOverride().showSuggestionAfterError(true).configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  for (const sub of command.commands) configureForExitCodes(sub, io);
}

function exitCodeFor(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.help' || error.code === 'commander.version') {
      return 0;
    }
    // Commander has already printed the message (with a suggestion for unknown commands).
    return 2;
  }
  if (error instanceof ExitStatus) return error.exitCode;
  if (error instanceof UsageError) {
    io.stderr(`Error: ${error.message}\n`);
    return error.exitCode;
  }
  const message = errorMessage(error);
  io.stderr(`Error: ${message}\n`);
  return 1;
}

/** The entry point of each bin: run, then exit with the code (closing handles the run left open). */
export async function main(build: () => Command): Promise<void> {
  let code: number;
  try {
    code = await runProgram(build(), process.argv.slice(2));
  } catch (error) {
    code = exitCodeFor(error, processIo);
  }
  process.exitCode = code;
  // Flush stdout before exiting: a pipe would otherwise lose the tail of long output.
  process.stdout.write('', () => process.exit(code));
}

/** Standard input, whole: what `-f -` reads. */
export async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

/** One line of standard input (a confirmation); '' at its end. */
export async function readProcessLine(): Promise<string> {
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: process.stdin, terminal: false });
  try {
    for await (const line of lines) return line;
    return '';
  } finally {
    lines.close();
  }
}
