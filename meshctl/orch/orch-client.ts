import { KubeConfig } from '@kubernetes/client-node';
import { UsageError, errorMessage } from '../../controllers/runtime/index.js';

export interface OrchClientFlags {
  /** `-c/--orchconfig`; '' looks where client-node looks (KUBECONFIG, ~/.kube/config, in-cluster). */
  readonly orchconfig: string;
  /** `--context`; '' keeps the file's current context. */
  readonly context: string;
}

/** The orchestrator's client configuration from meshctl's global flags. */
export function loadOrchClient(flags: OrchClientFlags): KubeConfig {
  const config = new KubeConfig();
  try {
    if (flags.orchconfig === '') config.loadFromDefault();
    else config.loadFromFile(flags.orchconfig);
  } catch (error) {
    throw new UsageError(`failed to load the orchestrator config ${flags.orchconfig || '(default)'}: ${errorMessage(error)}`, { cause: error });
  }
  if (flags.context !== '') {
    if (!config.getContexts().some((c) => c.name === flags.context)) throw new UsageError(`context "${flags.context}" does not exist in the orchestrator config`);
    config.setCurrentContext(flags.context);
  }
  // With nothing to load, client-node falls back to an unauthenticated http://localhost:8080.
  const fallback = flags.orchconfig === '' && config.getCurrentContext() === 'loaded-context' && config.getCurrentCluster()?.server === 'http://localhost:8080';
  if (!config.getCurrentCluster() || fallback) throw new UsageError('no orchestrator cluster configured: give -c/--orchconfig or set KUBECONFIG');
  return config;
}
