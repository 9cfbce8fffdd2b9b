import type { KubeConfig } from '@kubernetes/client-node';
import { MeshError, UsageError } from '../../runtime/index.js';
import { parseConfigDump, type EnvoyConfigDump } from '../proxyconfig/config-dump.js';
import type { ProxyAdmin } from '../proxyconfig/proxy-config.js';
import { DAEMON_QUERY_TIMEOUT_MS, queryDaemons } from '../proxystatus/daemon-query.js';
import { clusterStatusesOf } from './cluster-statuses.js';

/** The config a daemon last sent to a proxy (`/debug/config_dump?proxyID=`), as a config dump. */
export async function daemonConfigDump(kubeConfig: KubeConfig, meshNamespace: string, proxyId: string): Promise<{ daemon: string; dump: EnvoyConfigDump }> {
  const { answers, failures } = await queryDaemons(kubeConfig, {
    meshNamespace,
    revision: '',
    path: `/debug/config_dump?proxyID=${encodeURIComponent(proxyId)}`,
    timeoutMs: DAEMON_QUERY_TIMEOUT_MS,
  });
  const [daemon, body] = [...answers][0] ?? [];
  if (daemon === undefined || body === undefined)
    throw new MeshError(
      'proxy-config-failed',
      `no meshd instance knows the proxy ${proxyId}: is it connected? (${[...failures].map(([pod, why]) => `${pod}: ${why}`).join('; ')})`,
    );
  return { daemon, dump: parseConfigDump(body, `the config meshd pod ${daemon} sent to ${proxyId}`) };
}

/**
 * A VM proxy's admin answers, from the daemon it is connected to: the cluster cannot port-forward
 * to a VM, but the daemon holds what it last sent the proxy (listeners, routes, clusters, endpoints,
 * secrets without key material). Log levels live only in the proxy and are refused.
 */
export function daemonAdmin(kubeConfig: KubeConfig, meshNamespace: string, proxyId: string): ProxyAdmin {
  const dump = async (): Promise<EnvoyConfigDump> => (await daemonConfigDump(kubeConfig, meshNamespace, proxyId)).dump;
  return {
    configDump: dump,
    clusters: async () => clusterStatusesOf(await dump()),
    logging: () =>
      Promise.reject(
        new UsageError(`${proxyId} is a VM's proxy: its log levels are set on the VM (pilot-agent request POST 'logging?level=…')`, { exitCode: 64 }),
      ),
  };
}
