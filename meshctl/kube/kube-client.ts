import type { ApiType, Configuration, KubeConfig } from '@kubernetes/client-node';
import { MeshError, UsageError, errorMessage } from '../../runtime/index.js';

export interface KubeClientFlags {
  /** `-c/--orchconfig`; '' looks where client-node looks (KUBECONFIG, ~/.kube/config, in-cluster). */
  readonly orchconfig: string;
  /** `--context`; '' keeps the file's current context. */
  readonly context: string;
  /** `--vklog`: from 6 on, each API request and response status is logged on stderr, as `kubectl -v=6` does. */
  readonly vklog?: number;
}

/** Where `--vklog` request lines go. */
export type RequestLog = (line: string) => void;

/** client-node's module, as `await import('@kubernetes/client-node')` gives it: loaded where a command first talks to a cluster. */
export type KubeApi = typeof import('@kubernetes/client-node');

/** A KubeConfig whose API clients log each request (method, URL) and each response status. */
function requestLoggingKubeConfig(k8s: KubeApi, requestLog: RequestLog): KubeConfig {
  class RequestLoggingKubeConfig extends k8s.KubeConfig {
    override makeApiClient<T extends ApiType>(apiClientType: new (config: Configuration) => T): T {
      const cluster = this.getCurrentCluster();
      if (!cluster) throw new MeshError('kube-no-cluster', 'No active cluster!');
      const config = k8s.createConfiguration({
        baseServer: new k8s.ServerConfiguration(cluster.server, {}),
        authMethods: { default: this },
        promiseMiddleware: [
          {
            pre: (context) => {
              requestLog(`${context.getHttpMethod()} ${context.getUrl()}`);
              return Promise.resolve(context);
            },
            post: (response) => {
              requestLog(`Response Status: ${response.httpStatusCode}`);
              return Promise.resolve(response);
            },
          },
        ],
      });
      return new apiClientType(config);
    }
  }
  return new RequestLoggingKubeConfig();
}

/**
 * The Kubernetes client configuration from meshctl's global flags. client-node (a 14 MB module)
 * is loaded here, by the first command that talks to a cluster, never by the offline ones.
 */
export async function loadKubeClient(flags: KubeClientFlags, requestLog: RequestLog = (line) => process.stderr.write(`${line}\n`)): Promise<KubeConfig> {
  const k8s = await import('@kubernetes/client-node');
  const config = (flags.vklog ?? 0) >= 6 ? requestLoggingKubeConfig(k8s, requestLog) : new k8s.KubeConfig();
  try {
    if (flags.orchconfig === '') config.loadFromDefault();
    else config.loadFromFile(flags.orchconfig);
  } catch (error) {
    throw new UsageError(`failed to load the orchestrator config ${flags.orchconfig || '(default)'}: ${errorMessage(error)}`, { cause: error });
  }
  if (flags.context !== '') {
    if (!config.getContexts().some((c) => c.name === flags.context))
      throw new UsageError(`context "${flags.context}" does not exist in the orchestrator config`);
    config.setCurrentContext(flags.context);
  }
  // With nothing to load, client-node falls back to an unauthenticated http://localhost:8080.
  const fallback = flags.orchconfig === '' && config.getCurrentContext() === 'loaded-context' && config.getCurrentCluster()?.server === 'http://localhost:8080';
  if (!config.getCurrentCluster() || fallback) throw new UsageError('no orchestrator cluster configured: give -c/--orchconfig or set KUBECONFIG');
  return config;
}
