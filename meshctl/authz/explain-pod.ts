import type { KubeConfig } from '@kubernetes/client-node';
import { ANNOTATIONS } from '../../names/index.js';
import { UsageError } from '../../runtime/index.js';
import { namespaceOf } from '../kube/pod-target.js';
import { proxyTypeOf } from '../proxyconfig/config-dump.js';
import { fileAdmin } from '../proxyconfig/proxy-config.js';
import { resolveProxyTarget, type ProxyTarget } from '../vmproxy/proxy-target.js';
import { targetAdmin } from '../vmproxy/target-admin.js';
import { explainRequest, type ExplainRequest, type Explanation } from './explain.js';
import { entryPort, requestHeaders, resolveSource, targetPort, type SourceFlags, type SourceWorkload } from './explain-target.js';

/** What `x authz explain` is asked: the request (as its flags say it) and where the proxy's config comes from. */
export interface ExplainPodInput extends SourceFlags {
  /** The pod or VM whose proxy decides (`[<type>/]<name>[.<namespace>]`, `workloadentry/<name>`); or `file`. */
  readonly target?: string;
  /** A saved config dump instead of the pod's. */
  readonly file?: string;
  /** Needed for a pod target or `from`. */
  readonly kubeConfig?: KubeConfig;
  /** `-n`: the namespace of names without one. */
  readonly namespace: string;
  /** Where the daemons run: a VM's proxy is known through them. */
  readonly meshNamespace: string;
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
 * `x authz explain` without its command line: the target resolved (a pod's proxy config dump read
 * through a port-forward, a VM's from its daemon, or the file), the request's source resolved (a
 * `from` workload's own proxy decides whether it speaks mutual TLS), and the request explained.
 */
export async function explainPod(input: ExplainPodInput): Promise<{ request: ExplainRequest; explanation: Explanation }> {
  const { kubeConfig } = input;
  const namespace = kubeConfig ? namespaceOf(kubeConfig, input.namespace) : 'default';
  const needCluster = (): KubeConfig => {
    if (!kubeConfig) throw new UsageError('a pod target or --from needs a cluster', { exitCode: 64 });
    return kubeConfig;
  };
  const resolve = (name: string): Promise<ProxyTarget> => resolveProxyTarget(needCluster(), name, namespace, input.meshNamespace);
  const target = input.target !== undefined ? await resolve(input.target) : undefined;
  const dump = target
    ? await targetAdmin(needCluster(), target, input.meshNamespace, { includeEds: true }).configDump()
    : await fileAdmin(input.file ?? '').configDump();
  const port = target?.kind === 'vm' ? entryPort(target.entry, input.port) : targetPort(target?.pod, input.port);
  const address = input.address ?? (target?.kind === 'vm' ? target.address : target?.pod.status?.podIP) ?? '0.0.0.0';
  const request: ExplainRequest = {
    method: input.method,
    path: input.path,
    host: input.host ?? `${address}:${port}`,
    headers: await requestHeaders(input),
    source: await resolveSource(input, async (name) => sourceWorkload(needCluster(), await resolve(name), input.meshNamespace), { address, port }),
    address,
    port,
    // A gateway's bootstrap names it a router: its listeners are bound to their ports.
    gateway: input.gateway || proxyTypeOf(dump) === 'router',
    now: input.now ?? new Date(),
  };
  return { request, explanation: await explainRequest(dump, request) };
}

/** A `--from` client: a pod is meshed when it was injected; a VM always has its proxy. */
function sourceWorkload(kubeConfig: KubeConfig, client: ProxyTarget, meshNamespace: string): SourceWorkload {
  const dump = () => targetAdmin(kubeConfig, client, meshNamespace, { includeEds: true }).configDump();
  if (client.kind === 'vm') return { meshed: true, namespace: client.namespace, serviceAccount: client.entry?.spec.serviceAccount ?? 'default', dump };
  return {
    meshed: client.pod.metadata?.annotations?.[ANNOTATIONS.status] !== undefined,
    namespace: client.namespace,
    serviceAccount: client.pod.spec?.serviceAccountName ?? 'default',
    dump,
  };
}
