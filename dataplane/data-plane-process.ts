import { AGENT_SCOPES, newLogging, newManager, runnableOf, UsageError, type LogLevel, type Logging, type Manager } from '../runtime/index.js';
import { loadEnvoyProtos } from '../xds/envoy/index.js';
import { newEmbeddedRunner } from './embedded-runner.js';

/** Envoy's level names, as `-l` and the admin `/logging` take them, onto the data plane's scope. */
const ENVOY_LEVELS: Readonly<Record<string, LogLevel>> = {
  trace: 'debug',
  debug: 'debug',
  info: 'info',
  warning: 'warn',
  warn: 'warn',
  error: 'error',
  critical: 'fatal',
  off: 'none',
};

export interface DataPlaneProcessOptions {
  /** The Envoy bootstrap the agent wrote, parsed. */
  readonly bootstrap: Record<string, unknown>;
  /** `-l`: an Envoy level name. */
  readonly logLevel: string;
}

/** The assembled data plane program: start its manager until `quit` or a signal; close its logging once it has stopped. */
export interface DataPlaneProcess {
  readonly manager: Manager;
  readonly logging: Logging;
  /** Aborted by `POST /quitquitquit` on the admin port. */
  readonly quit: AbortController;
}

/**
 * Assembles the embedded data plane as its own process, on one manager like the daemon and the
 * agent: the runner (admin port, listeners, the xDS and SDS subscriptions) is its one runnable,
 * stopped when the manager stops. Throws a `UsageError` for an unknown level.
 */
export function newDataPlaneProcess(options: DataPlaneProcessOptions): DataPlaneProcess {
  const level = ENVOY_LEVELS[options.logLevel];
  if (!level) throw new UsageError(`--log-level must be one of ${Object.keys(ENVOY_LEVELS).join(', ')}, got "${options.logLevel}"`);
  const logging = newLogging(
    {
      outputLevels: new Map([
        ['default', 'info'],
        ['ads', level],
      ]),
    },
    AGENT_SCOPES,
  );
  const log = logging.scope('ads');
  const quit = new AbortController();
  const manager = newManager({ log });
  const runner = newEmbeddedRunner({
    protos: loadEnvoyProtos(),
    bootstrap: options.bootstrap,
    log,
    logLevel: options.logLevel,
    setLogLevel: (name) => {
      const mapped = ENVOY_LEVELS[name];
      if (mapped) logging.setScope('ads', { outputLevel: mapped });
    },
    quit: () => quit.abort(),
  });
  manager.add(
    runnableOf('data-plane', async () => {
      try {
        await runner.start();
      } catch (error) {
        await runner.stop();
        throw error;
      }
      return () => runner.stop();
    }),
  );
  return { manager, logging, quit };
}
