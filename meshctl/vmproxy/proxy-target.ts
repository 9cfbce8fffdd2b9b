import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import type { WorkloadEntry } from '../../crds/index.js';
import { KINDS } from '../../crds/index.js';
import { MeshError, UsageError } from '../../runtime/index.js';
import { resolvePodTarget } from '../kube/pod-target.js';
import { connectedProxies, type ConnectedProxy } from './connected-proxies.js';

const ENTRY_TYPES = new Set(['workloadentry', 'workloadentries', 'we']);

/** A proxy a command is pointed at: a pod's sidecar (reached through a port-forward) or a VM's (known through the daemon). */
export type ProxyTarget =
  | { readonly kind: 'pod'; readonly name: string; readonly namespace: string; readonly pod: V1Pod }
  | {
      readonly kind: 'vm';
      /** `<name>.<namespace>`: the daemon's name for it. */
      readonly proxyId: string;
      readonly namespace: string;
      readonly address: string;
      /** The WorkloadEntry of its address, when there is one. */
      readonly entry: WorkloadEntry | undefined;
    };

/**
 * The `(name, namespace)` readings of `<name>[.<namespace>]`, most likely first: entry names often
 * hold dots (auto-registered ones end in the VM's address), so the whole in the default namespace,
 * then each dot from the last as the namespace separator.
 */
function readings(rest: string, defaultNamespace: string): { name: string; namespace: string }[] {
  const split = [...rest.matchAll(/\./g)]
    .map((match) => match.index)
    .reverse()
    .map((at) => ({ name: rest.slice(0, at), namespace: rest.slice(at + 1) }));
  return [{ name: rest, namespace: defaultNamespace }, ...split].filter((reading) => reading.name !== '' && reading.namespace !== '');
}

async function findEntry(kubeConfig: KubeConfig, rest: string, defaultNamespace: string): Promise<WorkloadEntry | undefined> {
  for (const { name, namespace } of readings(rest, defaultNamespace)) {
    const entry = (await listEntries(kubeConfig, namespace).catch(() => [])).find((candidate) => candidate.metadata.name === name);
    if (entry) return entry;
  }
  return undefined;
}

async function listEntries(kubeConfig: KubeConfig, namespace: string): Promise<WorkloadEntry[]> {
  const { group, version, plural } = KINDS.WorkloadEntry;
  const { CustomObjectsApi } = await import('@kubernetes/client-node');
  const list = (await kubeConfig.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group, version, namespace, plural })) as {
    items?: WorkloadEntry[];
  };
  return list.items ?? [];
}

const vmTarget = (proxy: ConnectedProxy, entry: WorkloadEntry | undefined): ProxyTarget => ({
  kind: 'vm',
  proxyId: proxy.id,
  namespace: proxy.namespace,
  address: entry?.spec.address ?? proxy.ip,
  entry,
});

/**
 * The proxy a `[<type>/]<name>[.<namespace>]` target names. Pods, Deployments and Services resolve
 * to a pod as `resolvePodTarget` does. A VM has no pod to port-forward to: `workloadentry/<name>`
 * (`we/`) names the proxy connected from the entry's address, and a plain name that is no pod is
 * looked up among the connected proxies by the ID `proxy-status` shows (`<host>.<namespace>`).
 */
export async function resolveProxyTarget(kubeConfig: KubeConfig, target: string, defaultNamespace: string, meshNamespace: string): Promise<ProxyTarget> {
  const slash = target.indexOf('/');
  const type = slash >= 0 ? target.slice(0, slash).toLowerCase() : 'pod';
  const rest = slash >= 0 ? target.slice(slash + 1) : target;
  if (ENTRY_TYPES.has(type)) {
    if (rest === '') throw new UsageError(`"${target}": no name`, { exitCode: 64 });
    const entry = await findEntry(kubeConfig, rest, defaultNamespace);
    if (!entry)
      throw new MeshError(
        'pod-not-found',
        `workloadentries.${KINDS.WorkloadEntry.group} "${rest}" not found (namespace ${defaultNamespace} unless the name ends in one)`,
      );
    const namespace = entry.metadata.namespace ?? defaultNamespace;
    const address = entry.spec.address ?? '';
    const proxy = (await connectedProxies(kubeConfig, meshNamespace)).find((candidate) => candidate.namespace === namespace && candidate.ip === address);
    if (!proxy)
      throw new MeshError('pod-not-found', `no proxy is connected from the address ${address} of WorkloadEntry ${entry.metadata.name ?? ''}.${namespace}`);
    return vmTarget(proxy, entry);
  }
  try {
    return { kind: 'pod', ...(await resolvePodTarget(kubeConfig, target, defaultNamespace)) };
  } catch (error) {
    if (type !== 'pod' || !(error instanceof MeshError) || error.code !== 'pod-not-found') throw error;
    const proxies = await connectedProxies(kubeConfig, meshNamespace).catch(() => []);
    const proxy = proxies.find((candidate) => candidate.id === rest) ?? proxies.find((candidate) => candidate.id === `${rest}.${defaultNamespace}`);
    if (!proxy) throw error;
    const entry = (await listEntries(kubeConfig, proxy.namespace).catch(() => [])).find((candidate) => candidate.spec.address === proxy.ip);
    return vmTarget(proxy, entry);
  }
}
