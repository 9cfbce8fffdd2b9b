import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { UsageError } from '../../runtime/index.js';
import { namespaceOf, resolvePodTarget } from '../kube/pod-target.js';
import { podAdmin } from '../proxyconfig/pod-admin.js';
import { fileAdmin } from '../proxyconfig/proxy-config.js';
import { explainRequest, type ExplainRequest, type Explanation } from './explain.js';
import { requestHeaders, resolveSource, targetPort, type SourceFlags } from './explain-target.js';

/** What `x authz explain` is asked: the request (as its flags say it) and where the proxy's config comes from. */
export interface ExplainPodInput extends SourceFlags {
  /** The pod whose proxy decides (`[<type>/]<name>[.<namespace>]`); or `file`. */
  readonly target?: string;
  /** A saved config dump instead of the pod's. */
  readonly file?: string;
  /** Needed for a pod target or `from`. */
  readonly kubeConfig?: KubeConfig;
  /** `-n`: the namespace of names without one. */
  readonly namespace: string;
  readonly method: string;
  readonly path: string;
  readonly host?: string;
  readonly header?: readonly string[];
  readonly token?: string;
  readonly tokenFile?: string;
  readonly port?: number;
  readonly address?: string;
  readonly gateway: boolean;
  readonly now?: Date;
}

/**
 * `x authz explain` without its command line: the pod resolved and its proxy's config dump read
 * through a port-forward (or the file), the request's source resolved (a `from` pod's own proxy
 * decides whether it speaks mutual TLS), and the request explained.
 */
export async function explainPod(input: ExplainPodInput): Promise<{ request: ExplainRequest; explanation: Explanation }> {
  const { kubeConfig } = input;
  const namespace = kubeConfig ? namespaceOf(kubeConfig, input.namespace) : 'default';
  const needCluster = (): KubeConfig => {
    if (!kubeConfig) throw new UsageError('a pod target or --from needs a cluster', { exitCode: 64 });
    return kubeConfig;
  };
  const resolvePod = (name: string): Promise<{ name: string; namespace: string; pod: V1Pod }> => resolvePodTarget(needCluster(), name, namespace);
  const pod = input.target !== undefined ? await resolvePod(input.target) : undefined;
  const dump = pod ? await podAdmin(needCluster(), pod.namespace, pod.name, { includeEds: true }).configDump() : await fileAdmin(input.file ?? '').configDump();
  const port = targetPort(pod?.pod, input.port);
  const address = input.address ?? pod?.pod.status?.podIP ?? '0.0.0.0';
  const request: ExplainRequest = {
    method: input.method,
    path: input.path,
    host: input.host ?? `${address}:${port}`,
    headers: await requestHeaders(input),
    source: await resolveSource(input, async (name) => (await resolvePod(name)).pod, {
      dumpOf: (client) => podAdmin(needCluster(), client.metadata?.namespace ?? namespace, client.metadata?.name ?? '', { includeEds: true }).configDump(),
      address,
      port,
    }),
    address,
    port,
    gateway: input.gateway,
    now: input.now ?? new Date(),
  };
  return { request, explanation: await explainRequest(dump, request) };
}
