import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { TlsFiles } from '../ca/index.js';
import { errorMessage, UsageError, type ManagerLeaderElectionOptions } from '../runtime/index.js';
import type { MeshdOptions } from './options.js';

/**
 * The Kubernetes client config: `--orchconfig`; without it and without `--configDir`, what client-node
 * finds on its own (KUBECONFIG, ~/.kube/config, or the in-cluster service account). None means
 * local mode.
 */
export async function loadKubeConfig(path: string, needsCluster: boolean): Promise<KubeConfig | undefined> {
  if (path === '' && !needsCluster) return undefined;
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  if (path === '') {
    kubeConfig.loadFromDefault();
    // client-node falls back to an unauthenticated localhost:8080 when it found nothing.
    if (kubeConfig.getCurrentContext() === 'loaded-context' && kubeConfig.getCurrentCluster()?.server === 'http://localhost:8080') {
      throw new UsageError('no config source: give --configDir, or --orchconfig (or KUBECONFIG, or run in a cluster)');
    }
    return kubeConfig;
  }
  try {
    kubeConfig.loadFromFile(path);
  } catch (error) {
    throw new UsageError(`invalid --orchconfig "${path}": ${errorMessage(error)}`, { cause: error });
  }
  return kubeConfig;
}

/** Daemons with an orchestrator elect a leader on a Lease in their namespace. */
export function leaderElectionFor(kubeConfig: KubeConfig, options: MeshdOptions): ManagerLeaderElectionOptions {
  const podName = options.settings.get('POD_NAME') || hostname();
  return {
    kubeConfig,
    namespace: options.namespace,
    name: 'meshd-leader',
    identity: `${podName}_${randomBytes(4).toString('hex')}`,
    ...options.leaderElectionTimings,
  };
}

export async function checkConfigDir(configDir: string): Promise<void> {
  if (configDir === '') return;
  const info = await stat(configDir).catch(() => undefined);
  if (!info?.isDirectory()) throw new UsageError(`invalid --configDir "${configDir}": expected an existing directory`);
}

/** `--tlsCertFile` and `--tlsKeyFile` go together; `--caCertFile` adds client-certificate roots. */
export function tlsFilesOf(options: MeshdOptions): TlsFiles | undefined {
  if (options.tlsCertFile === '' && options.tlsKeyFile === '') return undefined;
  if (options.tlsCertFile === '' || options.tlsKeyFile === '') throw new UsageError('--tlsCertFile and --tlsKeyFile must be given together');
  return {
    certFile: options.tlsCertFile,
    keyFile: options.tlsKeyFile,
    ...(options.caCertFile === '' ? {} : { caCertFile: options.caCertFile }),
    ...(options.tlsFilesRefreshMs === undefined ? {} : { refreshIntervalMs: options.tlsFilesRefreshMs }),
  };
}
