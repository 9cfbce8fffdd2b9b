import { KubeConfig, ServerConfiguration, createConfiguration, type ApiType, type Configuration } from '@kubernetes/client-node';
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

/** A KubeConfig whose API clients log each request (method, URL) and each response status. */
class RequestLoggingKubeConfig extends KubeConfig {
  constructor(private readonly requestLog: RequestLog) {
    super();
  }

  override makeApiClient<T extends ApiType>(apiClientType: new (config: Configuration) => T): T {
    const cluster = this.getCurrentCluster();
    if (!cluster) throw new MeshError('kube-no-cluster', 'No active cluster!');
    const log = this.requestLog;
    const config = createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: this },
      promiseMiddleware: [
        {
          pre: (context) => {
            log(`${context.getHttpMethod()} ${context.getUrl()}`);
            return Promise.resolve(context);
          },
          post: (response) => {
            log(`Response Status: ${response.httpStatusCode}`);
            return Promise.resolve(response);
          },
        },
      ],
    });
    return new apiClientType(config);
  }
}

/** The Kubernetes client configuration from meshctl's global flags. */
export function loadKubeClient(flags: KubeClientFlags, requestLog: RequestLog = (line) => process.stderr.write(`${line}\n`)): KubeConfig {
  const config = (flags.vklog ?? 0) >= 6 ? new RequestLoggingKubeConfig(requestLog) : new KubeConfig();
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
