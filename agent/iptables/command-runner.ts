import { spawn } from 'node:child_process';

export interface CommandResult {
  /** The exit code; -1 when the program could not be started (`stderr` says why). */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs one program with `argv[0]` looked up on the PATH, feeding `stdin` when given. */
export type CommandRunner = (argv: readonly string[], stdin?: string) => Promise<CommandResult>;

/** The real runner, through child_process (no shell). */
export function newProcessRunner(): CommandRunner {
  return (argv, stdin) =>
    new Promise((resolve) => {
      const [program, ...args] = argv;
      if (program === undefined) {
        resolve({ code: -1, stdout: '', stderr: 'empty command' });
        return;
      }
      const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('error', (error: NodeJS.ErrnoException) => {
        const reason = error.code === 'ENOENT' ? `${program}: command not found` : error.message;
        resolve({ code: -1, stdout, stderr: stderr + reason });
      });
      child.once('close', (code, signal) => {
        resolve({ code: code ?? -1, stdout, stderr: signal ? `${stderr}killed by ${signal}` : stderr });
      });
      // A program that exits without reading its input makes the write fail with EPIPE: ignore it.
      child.stdin.on('error', () => undefined);
      child.stdin.end(stdin ?? '');
    });
}
