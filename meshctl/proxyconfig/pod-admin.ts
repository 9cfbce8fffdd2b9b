import type { KubeConfig } from '@kubernetes/client-node';
import { MeshError } from '../../runtime/index.js';
import { podHttp } from '../kube/pod-http.js';
import { parseConfigDump } from './config-dump.js';
import type { ProxyAdmin } from './proxy-config.js';

/** The proxy admin port (Envoy's and the embedded data plane's). */
export const PROXY_ADMIN_PORT = 15000;

/** A pod's proxy admin API through a port-forward (the reference's `EnvoyDo`). */
export function podAdmin(kubeConfig: KubeConfig, namespace: string, pod: string, options: { includeEds?: boolean } = {}): ProxyAdmin {
  const call = async (method: string, path: string): Promise<string> => {
    const response = await podHttp(kubeConfig, { namespace, pod, port: PROXY_ADMIN_PORT, method, path });
    if (response.status >= 400)
      throw new MeshError('proxy-config-failed', `${pod}.${namespace}: ${method} ${path}: ${response.status} ${response.body.trim()}`);
    return response.body;
  };
  return {
    configDump: async () =>
      parseConfigDump(await call('GET', options.includeEds ? '/config_dump?include_eds' : '/config_dump'), `the config dump of ${pod}.${namespace}`),
    clusters: async () => JSON.parse(await call('GET', '/clusters?format=json')) as unknown,
    logging: (query) => call('POST', query === '' ? '/logging' : `/logging?${query}`),
  };
}
