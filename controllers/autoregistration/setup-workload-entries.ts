import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock, Logging, MeshMetrics, Settings } from '../../runtime/index.js';
import { workloadEntrySettingsFromSettings } from '../config-settings.js';
import { newKubeWorkloadEntryClient } from './workload-entry-client.js';
import { newWorkloadEntryController, type WorkloadEntryController } from './workload-entry-controller.js';

export interface WorkloadEntrySetupOptions {
  readonly settings: Settings<'pilot-discovery'>;
  /** Kubernetes mode: entries are written through the API server. Absent (a config folder): nothing is registered. */
  readonly kubeConfig?: KubeConfig;
  /** `mesh.io/workloadController`: this daemon's pod name. */
  readonly instanceId: string;
  /** `--keepaliveMaxServerConnectionAge`. */
  readonly maxConnectionAgeMs: number;
  readonly clock: Clock;
  /** Scope `wle`. */
  readonly logging: Logging;
  readonly metrics: MeshMetrics<'pilot-discovery'>;
}

/**
 * WorkloadEntry auto-registration and health checks, for the xDS server to feed. Off when both
 * settings are off, and with a config folder: the folder is the only source of config there and
 * nothing writes it, so an entry made in memory would be served by this daemon alone and vanish
 * at restart; the daemon says so once.
 */
export function newWorkloadEntries(options: WorkloadEntrySetupOptions): WorkloadEntryController | undefined {
  const settings = workloadEntrySettingsFromSettings(options.settings);
  const log = options.logging.scope('wle');
  if (!settings.autoRegistration && !settings.healthChecks) return undefined;
  const kubeConfig = options.kubeConfig;
  if (!kubeConfig) {
    log.info({}, 'WorkloadEntry auto-registration and health checks need the Kubernetes API: off with a config folder');
    return undefined;
  }
  return newWorkloadEntryController({
    client: () => newKubeWorkloadEntryClient(kubeConfig),
    instanceId: options.instanceId,
    ...settings,
    maxConnectionAgeMs: options.maxConnectionAgeMs,
    clock: options.clock,
    log,
    metrics: options.metrics,
  });
}
