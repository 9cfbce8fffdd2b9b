import { isIP } from 'node:net';
import { LABELS, labelsMatch } from '../../names/index.js';
import type { WorkloadEntry, WorkloadEntrySpec } from '../../crds/index.js';
import { isHealthyEntry, type ConfigEntry, type Endpoint, type MeshModel, type Service, type ServicePort, type Workload } from '../../controllers/index.js';

/** The services of ServiceEntries' hosts and the endpoints WorkloadEntries, pods and inline endpoints give services. */
export interface ServiceEntryServices {
  /** One per host of every ServiceEntry, unless a Kubernetes Service or an earlier entry has the host. */
  readonly services: readonly Service[];
  /** By `<hostname>:<port>`: the endpoints of the entries' services, and WorkloadEntries that Kubernetes Services select. */
  readonly endpoints: ReadonlyMap<string, readonly Endpoint[]>;
  /** By hostname: the service accounts of the pods and WorkloadEntries behind an entry's host. */
  readonly serviceAccounts: ReadonlyMap<string, readonly string[]>;
  /**
   * The ports an entry declares for a host that a Kubernetes Service or an earlier entry already
   * has on the same port: the one cluster both would make is kept once (the first).
   */
  readonly duplicateServicePorts: readonly ServicePortRef[];
}

/** A service port by host and number. */
export interface ServicePortRef {
  readonly hostname: string;
  readonly port: number;
}

/**
 * ServiceEntries as the reference converts them: one service per host (namespace the entry's;
 * ports with their protocol and target port; `addresses` as its VIPs; `location`, `resolution`
 * and `subjectAltNames` kept), in the order of the entries by namespace and name, a host already
 * taken by a Kubernetes Service or an earlier entry left out. Endpoints come from the
 * `workloadSelector` (WorkloadEntries of the entry's namespace, and pods when
 * `serviceEntriesSelectPods`), else from `endpoints`; a DNS entry with neither resolves its host.
 * WorkloadEntries also become endpoints of the Kubernetes Services whose selector matches them
 * (`servicesSelectWorkloadEntries`).
 */
export function buildServiceEntryServices(model: MeshModel, kubernetesServices: readonly Service[], workloads: Iterable<Workload>): ServiceEntryServices {
  const { selection } = model;
  const taken = new Map(kubernetesServices.map((service) => [service.hostname, service]));
  const duplicateServicePorts: ServicePortRef[] = [];
  const workloadEntries = sortedEntries(model.configStore.list('WorkloadEntry'));
  const pods = [...workloads];
  const services: Service[] = [];
  const endpoints = new Map<string, Endpoint[]>();
  const serviceAccounts = new Map<string, string[]>();

  for (const entry of sortedEntries(model.configStore.list('ServiceEntry'))) {
    const spec = entry.resource.spec;
    const selector = spec.workloadSelector?.labels;
    const selectedEntries = selector
      ? workloadEntries.filter((we) => we.namespace === entry.namespace && labelsMatch(selector, we.resource.spec.labels ?? {}))
      : [];
    const selectedPods =
      selector && selection.serviceEntriesSelectPods
        ? pods.filter((pod) => pod.namespace === entry.namespace && pod.active && pod.address !== '' && labelsMatch(selector, pod.labels))
        : [];
    for (const host of spec.hosts) {
      const kept = taken.get(host);
      if (kept) {
        for (const port of spec.ports ?? []) {
          if (kept.ports.some((keptPort) => keptPort.port === port.number)) duplicateServicePorts.push({ hostname: host, port: port.number });
        }
        continue;
      }
      const service = serviceOf(entry, host, selection.serviceEntriesSelectPods);
      taken.set(host, service);
      services.push(service);
      const accounts = new Set<string>();
      for (const port of service.ports) {
        const list: Endpoint[] = [];
        if (selector) {
          for (const we of selectedEntries) {
            list.push(workloadEntryEndpoint(service, port, we, model.clusterId));
            if (we.resource.spec.serviceAccount) accounts.add(we.resource.spec.serviceAccount);
          }
          for (const pod of selectedPods) {
            list.push(podEndpoint(service, port, pod));
            if (pod.serviceAccount !== '') accounts.add(pod.serviceAccount);
          }
        } else if (service.entry?.resolution !== 'NONE') {
          for (const endpoint of spec.endpoints ?? []) list.push(inlineEndpoint(service, port, endpoint, model.clusterId));
          if (list.length === 0 && (service.entry?.resolution === 'DNS' || service.entry?.resolution === 'DNS_ROUND_ROBIN')) {
            list.push(inlineEndpoint(service, port, { address: host }, model.clusterId));
          }
        }
        endpoints.set(`${host}:${port.port}`, list.sort(compareEndpoints));
      }
      serviceAccounts.set(host, [...accounts].sort());
    }
  }

  if (selection.servicesSelectWorkloadEntries) {
    for (const service of kubernetesServices) {
      const selector = service.selector;
      if (!selector) continue;
      const selected = workloadEntries.filter((we) => we.namespace === service.namespace && labelsMatch(selector, we.resource.spec.labels ?? {}));
      if (selected.length === 0) continue;
      for (const port of service.ports) {
        endpoints.set(
          `${service.hostname}:${port.port}`,
          selected.map((we) => workloadEntryEndpoint(service, port, we, model.clusterId)).sort(compareEndpoints),
        );
      }
      serviceAccounts.set(
        service.hostname,
        [...new Set(selected.map((we) => we.resource.spec.serviceAccount ?? '').filter((account) => account !== ''))].sort(),
      );
    }
  }
  return { services, endpoints, serviceAccounts, duplicateServicePorts };
}

function serviceOf(entry: ConfigEntry<'ServiceEntry'>, host: string, selectsPods: boolean): Service {
  const spec = entry.resource.spec;
  // A /32 or /128 is one address, written plain as the reference does.
  const addresses = (spec.addresses ?? []).map((address) => address.replace(/\/(32|128)$/, ''));
  const vip = addresses.find((address) => !address.includes('/'));
  const selector = spec.workloadSelector?.labels;
  return {
    name: host,
    namespace: entry.namespace,
    hostname: host,
    ports: (spec.ports ?? []).map((port): ServicePort => ({
      name: port.name,
      port: port.number,
      targetPort: port.targetPort ?? port.number,
      protocol: port.protocol?.toUpperCase() === 'UDP' ? 'UDP' : 'TCP',
      // Unset is sniffed, as the reference does for entries: not read from the port's name.
      appProtocol: (port.protocol ?? '').toLowerCase(),
    })),
    ...(selector && selectsPods ? { selector } : {}),
    ...(vip ? { clusterIp: vip } : {}),
    type: 'ServiceEntry',
    labels: entry.resource.metadata.labels ?? {},
    resourceVersion: entry.resourceVersion,
    entry: {
      resolution: spec.resolution ?? 'NONE',
      meshExternal: (spec.location ?? 'MESH_EXTERNAL') === 'MESH_EXTERNAL',
      addresses,
      subjectAltNames: spec.subjectAltNames ?? [],
      exportTo: spec.exportTo ?? [],
      entryName: entry.name,
    },
  };
}

/**
 * Whether an endpoint takes mesh mutual TLS, as the reference reads a WorkloadEntry: the tlsMode
 * label, else a service account means a sidecar. Never for a MESH_EXTERNAL service.
 */
function meshed(service: Service, spec: WorkloadEntrySpec): boolean {
  if (service.entry?.meshExternal) return false;
  const mode = spec.labels?.[LABELS.tlsMode];
  return mode !== undefined ? mode === 'mesh' : (spec.serviceAccount ?? '') !== '';
}

/** The endpoint's port: the entry's own port of that name, else the target port, else the service port. */
function endpointPort(port: ServicePort, spec: WorkloadEntrySpec): number {
  return spec.ports?.[port.name] ?? (typeof port.targetPort === 'number' ? port.targetPort : port.port);
}

function inlineEndpoint(service: Service, port: ServicePort, spec: WorkloadEntrySpec, clusterId: string): Endpoint {
  return {
    address: spec.address ?? '',
    port: endpointPort(port, spec),
    servicePort: port.port,
    servicePortName: port.name,
    ready: true,
    labels: spec.labels ?? {},
    serviceAccount: spec.serviceAccount ?? '',
    hasSidecar: meshed(service, spec),
    clusterId,
    nodeName: '',
    ...(spec.weight ? { weight: spec.weight } : {}),
  };
}

function workloadEntryEndpoint(service: Service, port: ServicePort, entry: ConfigEntry<'WorkloadEntry'>, clusterId: string): Endpoint {
  const spec: WorkloadEntry['spec'] = entry.resource.spec;
  // With health checks on (`proxy.mesh.io/health-checks-enabled`), ready only once the agent reported Healthy.
  const ready = isHealthyEntry(entry.resource.metadata.annotations, entry.resource.status);
  return { ...inlineEndpoint(service, port, spec, clusterId), ready, workload: { namespace: entry.namespace, name: entry.name } };
}

/**
 * A WorkloadEntry as the workload behind a proxy at its address (a VM's): its labels select it,
 * its ports name its container ports, its service account is its identity; undefined for an
 * address that is no IP (a host name or a Unix socket runs no proxy the mesh can find by address).
 */
export function workloadOfEntry(entry: ConfigEntry<'WorkloadEntry'>, clusterId: string): Workload | undefined {
  const spec: WorkloadEntry['spec'] = entry.resource.spec;
  const address = spec.address ?? '';
  if (isIP(address) === 0) return undefined;
  return {
    name: entry.name,
    namespace: entry.namespace,
    address,
    labels: spec.labels ?? {},
    serviceAccount: spec.serviceAccount ?? 'default',
    hasSidecar:
      spec.labels?.[LABELS.tlsMode] !== undefined ? spec.labels[LABELS.tlsMode] === 'mesh' : spec.serviceAccount !== undefined && spec.serviceAccount !== '',
    nodeName: '',
    clusterId,
    ready: isHealthyEntry(entry.resource.metadata.annotations, entry.resource.status),
    active: true,
    containerPorts: Object.entries(spec.ports ?? {}).map(([name, containerPort]) => ({ name, containerPort, protocol: 'TCP' as const })),
  };
}

function podEndpoint(service: Service, port: ServicePort, pod: Workload): Endpoint {
  return {
    address: pod.address,
    port: typeof port.targetPort === 'number' ? port.targetPort : port.port,
    servicePort: port.port,
    servicePortName: port.name,
    ready: pod.ready,
    workload: { namespace: pod.namespace, name: pod.name },
    labels: pod.labels,
    serviceAccount: pod.serviceAccount,
    hasSidecar: pod.hasSidecar && !service.entry?.meshExternal,
    clusterId: pod.clusterId,
    nodeName: pod.nodeName,
  };
}

function sortedEntries<K extends 'ServiceEntry' | 'WorkloadEntry'>(entries: readonly ConfigEntry<K>[]): ConfigEntry<K>[] {
  return [...entries].sort((a, b) => compare(a.namespace, b.namespace) || compare(a.name, b.name));
}

/** By address, then port: the order endpoint lists keep. */
export function compareEndpoints(a: Endpoint, b: Endpoint): number {
  return compare(a.address, b.address) || a.port - b.port;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
