import type { CustomObjectsApi, KubeConfig, V1Pod, V1Service } from '@kubernetes/client-node';
import { KINDS, type ServiceEntry, type WorkloadEntry } from '../../crds/index.js';
import type { ProxyAdmin } from '../proxyconfig/proxy-config.js';
import { resolveProxyTarget } from '../vmproxy/proxy-target.js';
import { targetAdmin } from '../vmproxy/target-admin.js';
import { clustersOf, configNameOf, configPathOf, routeConfigsOf, type EnvoyConfigDump, type Json } from '../proxyconfig/config-dump.js';
import { podAdmin } from '../proxyconfig/pod-admin.js';
import type { GatewayView, MeshResource, PodFacts, VmView } from './describe-pod.js';
import { PROXY_CONTAINER, labelsMatch } from '../../names/index.js';

const PLURALS: Record<string, string> = { 'destination-rule': 'destinationrules', 'virtual-service': 'virtualservices' };

/** The config paths a dump's clusters and routes name: `/apis/<group>/<version>/namespaces/<ns>/<kind>/<name>`. */
function configPaths(dump: EnvoyConfigDump): string[] {
  const routes = routeConfigsOf(dump).flatMap((config) =>
    ((config['virtual_hosts'] as Json[] | undefined) ?? []).flatMap((host) => (host['routes'] as Json[] | undefined) ?? []),
  );
  return [...new Set([...clustersOf(dump), ...routes].map((item) => configPathOf(item['metadata'])).filter((path): path is string => path !== undefined))];
}

async function fetchByPath(api: CustomObjectsApi, path: string): Promise<MeshResource | undefined> {
  const match = /^\/apis\/([^/]+)\/([^/]+)\/namespaces\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(path);
  if (!match) return undefined;
  const [, group = '', version = '', namespace = '', kind = '', name = ''] = match;
  return (await api.getNamespacedCustomObject({ group, version, namespace, plural: PLURALS[kind] ?? kind, name }).catch(() => undefined)) as
    MeshResource | undefined;
}

async function listMesh(api: CustomObjectsApi, plural: string, namespaces: readonly string[]): Promise<MeshResource[]> {
  const lists = await Promise.all(
    [...new Set(namespaces)].map((namespace) =>
      api
        .listNamespacedCustomObject({ group: 'security.mesh.io', version: 'v1beta1', namespace, plural })
        .then((list) => (list as { items?: MeshResource[] }).items ?? [])
        .catch(() => []),
    ),
  );
  return lists.flat();
}

/** A Service's selector: an empty one selects no pod. */
const selects = (service: V1Service, pod: V1Pod): boolean => {
  const selector = service.spec?.selector ?? {};
  return Object.keys(selector).length > 0 && labelsMatch(selector, pod.metadata?.labels ?? {});
};

/** The ServiceEntries of a namespace whose workloadSelector selects these labels. */
async function selectingServiceEntries(custom: CustomObjectsApi, namespace: string, labels: Record<string, string>): Promise<ServiceEntry[]> {
  const { group, version, plural } = KINDS.ServiceEntry;
  const list = (await custom.listNamespacedCustomObject({ group, version, namespace, plural }).catch(() => ({ items: [] }))) as { items?: ServiceEntry[] };
  return (list.items ?? [])
    .filter((entry) => entry.spec.workloadSelector !== undefined && labelsMatch(entry.spec.workloadSelector.labels ?? {}, labels))
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

/**
 * What `x describe pod` reads: the pod, its services and ServiceEntries, its proxy's dump (through
 * a port-forward; a VM's from its daemon), the config it names, the gateways. A VM is described
 * through `pod`, the pod-shaped view of its WorkloadEntry.
 */
export async function gatherPodFacts(
  kubeConfig: KubeConfig,
  pod: V1Pod,
  options: { readonly meshNamespace: string; readonly services?: readonly V1Service[]; readonly vm?: { readonly view: VmView; readonly admin: ProxyAdmin } },
): Promise<PodFacts> {
  const k8s = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const namespace = pod.metadata?.namespace ?? 'default';
  const services = options.services ?? (await core.listNamespacedService({ namespace })).items.filter((service) => selects(service, pod));
  const serviceEntries = options.services ? [] : await selectingServiceEntries(custom, namespace, pod.metadata?.labels ?? {});
  const meshed = (pod.spec?.containers ?? []).some((c) => c.name === PROXY_CONTAINER);
  const admin = options.vm?.admin ?? podAdmin(kubeConfig, namespace, pod.metadata?.name ?? '');
  const dump = meshed ? await admin.configDump() : undefined;
  const named = dump ? await Promise.all(configPaths(dump).map(async (path) => ({ path, resource: await fetchByPath(custom, path) }))) : [];
  const byKind = (kind: string): Map<string, MeshResource> =>
    new Map(
      named
        .filter(({ path, resource }) => path.includes(`/${kind}/`) && resource !== undefined)
        .map(({ path, resource }) => [configNameOf(path) ?? path, resource as MeshResource]),
    );
  const gatewayPods = (await core.listNamespacedPod({ namespace: options.meshNamespace, labelSelector: 'mesh=ingressgateway' })).items.filter(
    (p) => p.status?.phase === 'Running',
  );
  const gatewayServices = (
    await core.listNamespacedService({ namespace: options.meshNamespace, labelSelector: 'mesh=ingressgateway' }).catch(() => ({ items: [] as V1Service[] }))
  ).items;
  const external = gatewayServices.flatMap((s) => s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname)[0];
  const gateways: GatewayView[] = await Promise.all(
    gatewayPods.map(async (gateway) => ({
      pod: gateway,
      dump: await podAdmin(kubeConfig, options.meshNamespace, gateway.metadata?.name ?? '').configDump(),
      address: external ?? gateway.status?.podIP ?? '',
    })),
  );
  return {
    pod,
    services,
    dump,
    destinationRules: byKind('destination-rule'),
    virtualServices: byKind('virtual-service'),
    peerAuthentications: await listMesh(custom, 'peerauthentications', [namespace, options.meshNamespace]),
    requestAuthentications: await listMesh(custom, 'requestauthentications', [namespace, options.meshNamespace]),
    rootNamespace: options.meshNamespace,
    gateways: gatewayPods.length > 0 ? gateways : undefined,
    domain: 'cluster.local',
    serviceEntries,
    ...(options.vm ? { vm: options.vm.view } : {}),
  };
}

/** A WorkloadEntry as describe reads a pod: its labels, its named ports as a workload container's, and a proxy. */
function podViewOfVm(namespace: string, proxyId: string, entry: WorkloadEntry | undefined): V1Pod {
  return {
    metadata: { name: entry?.metadata.name ?? proxyId, namespace, labels: entry?.spec.labels ?? {} },
    spec: {
      serviceAccountName: entry?.spec.serviceAccount ?? 'default',
      containers: [
        { name: 'vm', ports: Object.entries(entry?.spec.ports ?? {}).map(([name, containerPort]) => ({ name, containerPort })) },
        { name: PROXY_CONTAINER },
      ],
    },
  };
}

/** `x describe pod <target>`: the pod (or VM) a target names, then its facts. */
export async function gatherPodTarget(kubeConfig: KubeConfig, target: string, namespace: string, meshNamespace: string): Promise<PodFacts> {
  const proxy = await resolveProxyTarget(kubeConfig, target, namespace, meshNamespace);
  if (proxy.kind === 'pod') return gatherPodFacts(kubeConfig, proxy.pod, { meshNamespace });
  const entry = proxy.entry ? { name: proxy.entry.metadata.name ?? '', ports: proxy.entry.spec.ports ?? {} } : undefined;
  return gatherPodFacts(kubeConfig, podViewOfVm(proxy.namespace, proxy.proxyId, proxy.entry), {
    meshNamespace,
    vm: { view: { proxyId: proxy.proxyId, address: proxy.address, entry }, admin: targetAdmin(kubeConfig, proxy, meshNamespace) },
  });
}

/** `x describe svc <name>`: the service's meshed pod to describe (with only this service), or how many pods it has and none meshed. */
export async function gatherServiceTarget(
  kubeConfig: KubeConfig,
  name: string,
  namespace: string,
  meshNamespace: string,
): Promise<{ readonly facts: PodFacts } | { readonly unmeshed: string }> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const [svcName = name, svcNamespace = namespace] = name.includes('.') ? [name.slice(0, name.indexOf('.')), name.slice(name.indexOf('.') + 1)] : [name];
  const service = await core.readNamespacedService({ name: svcName, namespace: svcNamespace });
  const pods = (await core.listNamespacedPod({ namespace: svcNamespace })).items.filter((pod) => selects(service, pod) && pod.status?.phase === 'Running');
  const meshed = pods
    .filter((pod) => (pod.spec?.containers ?? []).some((c) => c.name === PROXY_CONTAINER))
    .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  const first = meshed[0];
  if (!first) {
    return {
      unmeshed: `Service "${svcName}" has no mesh pods.  (${pods.length} pods in service).\nUse \`meshctl orch-inject\` or redeploy with automatic sidecar injection.\n`,
    };
  }
  return { facts: await gatherPodFacts(kubeConfig, first, { meshNamespace, services: [service] }) };
}
