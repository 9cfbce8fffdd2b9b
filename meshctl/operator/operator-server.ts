import type { KubeConfig } from '@kubernetes/client-node';
import { setupOperatorWithManager } from '../../install/index.js';
import { newLogging, newManager, newMetrics, newMonitoringServer, readBuildInfo, type LoggingOptions } from '../../runtime/index.js';

export interface OperatorServerOptions {
  readonly kubeConfig: KubeConfig;
  readonly watchedNamespaces: readonly string[];
  readonly manifestsDir: string;
  readonly revision: string;
  /** `--monitoringAddr`: `/metrics` and `/version`. */
  readonly monitoringAddr: string;
  readonly logging?: Partial<LoggingOptions>;
}

/**
 * `meshctl operator server`, what the operator's Deployment runs: the install operator's
 * controller on a manager, with its metrics served, until the signal aborts.
 */
export async function runOperatorServer(options: OperatorServerOptions, signal: AbortSignal): Promise<void> {
  const logging = newLogging(options.logging ?? {});
  const log = logging.scope('default');
  const metrics = newMetrics('meshctl');
  const buildInfo = readBuildInfo();
  metrics.gauge('version').set({ version: buildInfo.version }, 1);
  const manager = newManager({ log });
  setupOperatorWithManager(manager, {
    kubeConfig: options.kubeConfig,
    watchedNamespaces: options.watchedNamespaces,
    manifestsDir: options.manifestsDir,
    revision: options.revision,
    metrics,
    log,
  });
  manager.add(newMonitoringServer({ address: options.monitoringAddr, metrics, buildInfo: { ...buildInfo }, log }));
  log.info({ watchedNamespaces: options.watchedNamespaces.join(','), revision: options.revision || 'default' }, 'mesh operator starting');
  try {
    await manager.start(signal);
  } finally {
    await logging.close();
  }
}
