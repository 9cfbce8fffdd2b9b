import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  DAEMON_SCOPES,
  UsageError,
  loggingOptionsFrom,
  newControlZ,
  newHealthServer,
  newLogging,
  newManager,
  newMetrics,
  newMonitoringServer,
  readBuildInfo,
  type ManagerLeaderElectionOptions,
  type Runnable,
  type Settings,
} from '../controllers/runtime/index.js';
import type { DiscoveryFlags } from './discovery-command.js';
import type { CliIo } from './run-cli.js';

export interface DiscoveryContext {
  settings: Settings<'pilot-discovery'>;
  io: CliIo;
  args: readonly string[];
  /** Stops the daemon; the process signals SIGINT and SIGTERM are wired when absent. */
  signal?: AbortSignal;
}

/**
 * Assembles the daemon: the manager with self-monitoring, introspection and health. Config
 * sources, xDS, the CA and the webhooks plug into the same manager.
 */
export async function runDiscovery(flags: DiscoveryFlags, context: DiscoveryContext): Promise<void> {
  const startedAt = Date.now();
  const loggingOptions = loggingOptionsFrom(flags);
  await checkConfigDir(flags.configDir);
  const logging = newLogging(loggingOptions, DAEMON_SCOPES);
  const log = logging.scope('default');
  const metrics = newMetrics('pilot-discovery');
  const buildInfo = readBuildInfo();
  metrics.gauge('mesh_build').set({ component: 'pilot', tag: buildInfo.version }, 1);

  const manager = newManager({
    log,
    shutdownDurationMs: flags.shutdownDuration,
    leaderElection: await leaderElectionFor(flags, context.settings),
  });
  manager.add(newMonitoringServer({ address: flags.monitoringAddr, metrics, buildInfo: { ...buildInfo }, log }));
  manager.add(
    newControlZ({
      address: flags.ctrlz_address,
      port: flags.ctrlz_port,
      logging,
      settings: context.settings,
      buildInfo: { ...buildInfo },
      args: context.args,
      log,
    }),
  );
  manager.add(newHealthServer({ name: 'discovery-http', address: flags.httpAddr, health: manager.health, log }));
  manager.add(
    startupTracker(() => {
      const startupSeconds = (Date.now() - startedAt) / 1000;
      metrics.gauge('startup_duration_seconds').set(startupSeconds);
      log.info({ startupSeconds }, 'discovery service ready');
    }),
  );

  const { signal, release } = stopSignal(context.signal);
  try {
    log.info({ version: buildInfo.version, configDir: flags.configDir || undefined }, 'starting discovery service');
    await manager.start(signal);
    log.info('discovery service stopped');
  } finally {
    release();
    await logging.close();
  }
}

/** Runs once every group before it has started: the daemon is up. */
function startupTracker(onStarted: () => void): Runnable {
  return {
    name: 'startup-tracker',
    group: 'default',
    async start(signal) {
      onStarted();
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
    },
  };
}

/**
 * With an orchestrator config, daemons elect a leader on a Lease in their namespace; in local
 * mode there is a single daemon and no election.
 */
async function leaderElectionFor(
  flags: DiscoveryFlags,
  settings: Settings<'pilot-discovery'>,
): Promise<ManagerLeaderElectionOptions | undefined> {
  if (flags.orchconfig === '') return undefined;
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromFile(flags.orchconfig);
  } catch (error) {
    throw new UsageError(`invalid --orchconfig "${flags.orchconfig}": ${(error as Error).message}`);
  }
  const podName = settings.get('POD_NAME') || hostname();
  return {
    kubeConfig,
    namespace: flags.namespace,
    name: 'meshd-leader',
    identity: `${podName}_${randomBytes(4).toString('hex')}`,
  };
}

async function checkConfigDir(configDir: string): Promise<void> {
  if (configDir === '') return;
  const info = await stat(configDir).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new UsageError(`invalid --configDir "${configDir}": expected an existing directory`);
  }
}

function stopSignal(external: AbortSignal | undefined): { signal: AbortSignal; release: () => void } {
  if (external) return { signal: external, release: () => undefined };
  const controller = new AbortController();
  const stop = (): void => controller.abort(new Error('received a termination signal'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}
