import { Command } from 'commander';
import { errorMessage, MeshError, type Logger } from '../../runtime/index.js';
import { withCommandLogger } from '../command-logging.js';
import { intFlag } from '../flags.js';
import type { CliIo } from '../run-cli.js';

export interface WaitOptions {
  periodMillis: number;
  requestTimeoutMillis: number;
  timeoutSeconds: number;
  url: string;
}

/** Polls the readiness URL until it answers 200, logging as the reference does; throws a clear error when the time is up. */
export async function waitForReady(options: WaitOptions, log: Logger): Promise<void> {
  const deadline = Date.now() + options.timeoutSeconds * 1000;
  log.info({ url: options.url, timeoutSeconds: options.timeoutSeconds }, 'waiting for the proxy to be ready');
  let lastProblem: string;
  for (;;) {
    const problem = await probeOnce(options.url, options.requestTimeoutMillis);
    if (problem === undefined) {
      log.info({ url: options.url }, 'proxy is ready');
      return;
    }
    log.debug({ problem }, 'not ready yet');
    lastProblem = problem;
    if (Date.now() + options.periodMillis > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, options.periodMillis));
  }
  throw new MeshError('wait-timeout', `timed out after ${options.timeoutSeconds}s waiting for ${options.url} to answer 200: ${lastProblem}`);
}

async function probeOnce(url: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.arrayBuffer();
    return response.status === 200 ? undefined : `last answer was ${response.status}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${timeoutMs}ms`;
    return `last attempt failed: ${cause?.code ?? errorMessage(error)}`;
  }
}

export function newWaitCommand(io: CliIo): Command {
  return new Command('wait')
    .description('Waits until the proxy is ready')
    .option('--periodMillis <int>', 'number of milliseconds to wait between attempts', intFlag, 500)
    .option('--requestTimeoutMillis <int>', 'number of milliseconds to wait for response', intFlag, 500)
    .option('--timeoutSeconds <int>', 'maximum number of seconds to wait for proxy to be ready', intFlag, 60)
    .option('--url <string>', 'URL to use in requests', 'http://localhost:15021/healthz/ready')
    .action((options: WaitOptions, command: Command) => withCommandLogger(command, io, (log) => waitForReady(options, log)));
}
