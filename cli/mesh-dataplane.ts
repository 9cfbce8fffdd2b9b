import { fstatSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { errorMessage, AGENT_SCOPES, newLogging, stopSignal, UsageError, type LogLevel } from '../runtime/index.js';
import { newEmbeddedRunner } from '../dataplane/index.js';
import { loadEnvoyProtos } from '../xds/envoy/index.js';
import { main } from './run-cli.js';

/** Envoy's level names, as `-l` and the admin `/logging` take them, onto the data plane's scope. */
const ENVOY_LEVELS: Readonly<Record<string, LogLevel>> = { trace: 'debug', debug: 'debug', info: 'info', warning: 'warn', warn: 'warn', error: 'error', critical: 'fatal', off: 'none' };

interface DataPlaneFlags {
  configPath: string;
  logLevel: string;
}

/**
 * The embedded data plane as its own process, started by the agent the way it starts Envoy and
 * with Envoy's flags for what it shares: `-c <bootstrap>` and `-l <level>`. It runs until
 * SIGTERM/SIGINT or `POST /quitquitquit` on its admin port.
 */
async function runDataPlane(flags: DataPlaneFlags): Promise<void> {
  const level = ENVOY_LEVELS[flags.logLevel];
  if (!level) throw new UsageError(`--log-level must be one of ${Object.keys(ENVOY_LEVELS).join(', ')}, got "${flags.logLevel}"`);
  let bootstrap: Record<string, unknown>;
  try {
    bootstrap = JSON.parse(await readFile(flags.configPath, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`--config-path ${flags.configPath}: ${errorMessage(error)}`);
  }
  const logging = newLogging({ outputLevels: new Map([['default', 'info'], ['ads', level]]) }, AGENT_SCOPES);
  const log = logging.scope('ads');
  const quit = new AbortController();
  const { signal, release } = stopSignal(quit.signal);
  // Started by the agent, stdin is a pipe (a socket pair in Node) from it: its end means the agent
  // is gone, even killed, and the data plane goes with it.
  const stdin = fstatSync(0);
  if (stdin.isFIFO() || stdin.isSocket()) {
    process.stdin.on('end', () => quit.abort()).resume();
  }
  const runner = newEmbeddedRunner({
    protos: loadEnvoyProtos(),
    bootstrap,
    log,
    logLevel: flags.logLevel,
    setLogLevel: (name) => {
      const mapped = ENVOY_LEVELS[name];
      if (mapped) logging.setScope('ads', { outputLevel: mapped });
    },
    quit: () => quit.abort(),
  });
  try {
    await runner.start();
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  } finally {
    release();
    await runner.stop();
    await logging.close();
  }
}

function buildDataPlaneProgram(): Command {
  return new Command('mesh-dataplane')
    .description('The embedded data plane: serves the listeners, routes and clusters an Envoy bootstrap subscribes to')
    .requiredOption('-c, --config-path <path>', 'the Envoy bootstrap (JSON) the agent wrote')
    .option('-l, --log-level <level>', 'trace, debug, info, warning, error, critical or off', 'warning')
    .action((flags: DataPlaneFlags) => runDataPlane(flags));
}

await main(buildDataPlaneProgram);
