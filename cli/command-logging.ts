import type { Command } from 'commander';
import { loggingOptionsFrom, newLogging, type Logger, type LoggingFlagValues } from '../runtime/index.js';
import type { CliIo } from './run-cli.js';

/**
 * Runs `body` with the logger the command's `--log_*` flags describe (its stdout and stderr
 * targets are the command's own), and flushes the logging when it ends: how a short-lived command
 * such as `wait` or `mesh-iptables` logs, as the reference's do.
 */
export async function withCommandLogger<T>(command: Command, io: CliIo, body: (log: Logger) => Promise<T>): Promise<T> {
  const logging = newLogging(loggingOptionsFrom(command.opts<LoggingFlagValues>()), [], {
    stdout: { write: (text: string) => io.stdout(text) },
    stderr: { write: (text: string) => io.stderr(text) },
  });
  try {
    return await body(logging.scope('default'));
  } finally {
    await logging.close();
  }
}
