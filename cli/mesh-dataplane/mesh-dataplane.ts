import { fstatSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { errorMessage, stopSignal, UsageError } from '../../runtime/index.js';
import { newDataPlaneProcess } from '../../dataplane/index.js';
import { main } from '../run-cli.js';

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
  let bootstrap: Record<string, unknown>;
  try {
    bootstrap = JSON.parse(await readFile(flags.configPath, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`--config-path ${flags.configPath}: ${errorMessage(error)}`);
  }
  const { manager, logging, quit } = newDataPlaneProcess({ bootstrap, logLevel: flags.logLevel });
  const stop = stopSignal(quit.signal);
  // Started by the agent, stdin is a pipe (a socket pair in Node) from it: its end means the agent
  // is gone, even killed, and the data plane goes with it.
  const stdin = fstatSync(0);
  if (stdin.isFIFO() || stdin.isSocket()) {
    process.stdin.on('end', () => quit.abort()).resume();
  }
  try {
    await manager.start(stop.signal);
  } finally {
    stop.release();
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
