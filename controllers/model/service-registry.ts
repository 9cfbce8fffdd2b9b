import { stableJson } from '../stable-json.js';
import type { ObjectKey } from '../../runtime/index.js';
import { buildPodEndpoints, buildSliceEndpoints, resolveTargetPort, selectsWorkload } from './endpoint-builder.js';
import { labelsMatch } from '../../names/index.js';
import type { Endpoint, EndpointSliceInfo, NamespaceInfo, Service, ServicePort, Workload } from './registry-types.js';

/** The read side of the service registry: services, workloads, endpoints and namespaces. */
export interface ServiceRegistry {
  service(namespace: string, name: string): Service | undefined;
  /** Sorted by namespace, then name. */
  services(namespace?: string): readonly Service[];
  /** By `<svc>.<ns>.svc.<domain>`. */
  serviceByHost(hostname: string): Service | undefined;
  workload(namespace: string, name: string): Workload | undefined;
  /** Sorted by namespace, then name. */
  workloads(namespace?: string): readonly Workload[];
  /** The workloads of `namespace` carrying every label of `selector` (an empty selector: all of them). */
  workloadsMatching(namespace: string, selector: Readonly<Record<string, string>>): Workload[];
  /** Usually one; more while an address moves from a terminating pod to a new one. */
  workloadsByAddress(address: string): Workload[];
  /** The Services whose selector picks the workload. */
  servicesOfWorkload(workload: Workload): Service[];
  /** A Service's endpoints, all ports or one service port; sorted by service port, address, port. */
  endpoints(namespace: string, name: string, servicePort?: number): readonly Endpoint[];
  /** The service ports that reach this container port of the workload (what `portLevelMtls` keys bind). */
  servicePortsForContainerPort(namespace: string, workloadName: string, containerPort: number): { service: Service; port: ServicePort }[];
  /**
   * The container ports that services bind on the workloads `selector` picks in `namespace`;
   * undefined when no known workload matches (nothing can be said). The validator's hook.
   */
  servicePortsForWorkload(namespace: string | undefined, selector: Readonly<Record<string, string>>): number[] | undefined;
  /** The service accounts of the workloads behind a Service's endpoints, sorted. */
  serviceAccounts(namespace: string, name: string): string[];
  namespace(name: string): NamespaceInfo | undefined;
  namespaces(): readonly NamespaceInfo[];
  /** An EndpointSlice as stored (kept whatever the endpoint source, used only with `endpoint-slices`). */
  endpointSlice(namespace: string, name: string): EndpointSliceInfo | undefined;
  /**
   * Endpoint addresses of Services' EndpointSlices that name a pod the registry does not know yet
   * (the slice came before its pod): counted once per namespace and address, kept as endpoints are
   * rebuilt; 0 unless endpoints come from slices.
   */
  endpointsPendingPod(): number;
  /** Grows with every change. */
  version(): number;
}

/** What one write changed, for the push request it becomes. */
export interface RegistryChange {
  /** The object written changed at all (false: same content, nothing to push). */
  readonly changed: boolean;
  /** A Service itself changed (added, removed, ports, selector, labels). */
  readonly serviceChanged: boolean;
  /** A workload's labels, service account, node or cluster changed on an existing workload. */
  readonly identityChanged: boolean;
  /** Services whose endpoints changed. */
  readonly endpointsChanged: readonly ObjectKey[];
}

export interface ServiceRegistryWriter extends ServiceRegistry {
  applyService(service: Service): RegistryChange;
  deleteService(namespace: string, name: string): RegistryChange;
  applyWorkload(workload: Workload): RegistryChange;
  deleteWorkload(namespace: string, name: string): RegistryChange;
  applyEndpointSlice(slice: EndpointSliceInfo): RegistryChange;
  deleteEndpointSlice(namespace: string, name: string): RegistryChange;
  /** False when nothing changed. */
  applyNamespace(namespace: NamespaceInfo): boolean;
  deleteNamespace(name: string): boolean;
}

export interface ServiceRegistryOptions {
  /** Where endpoints come from: the pods a Service selects, or its EndpointSlices (`PILOT_USE_ENDPOINT_SLICE`). */
  endpointSource: 'pods' | 'endpoint-slices';
  /** Cluster of endpoints whose pod is unknown (`--clusterID`). */
  clusterId: string;
}

const NO_CHANGE: RegistryChange = { changed: false, serviceChanged: false, identityChanged: false, endpointsChanged: [] };

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

function splitKey(key: string): ObjectKey {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Nested by namespace, then name. */
class Nested<T> {
  readonly byNamespace = new Map<string, Map<string, T>>();

  get(namespace: string, name: string): T | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  set(namespace: string, name: string, value: T): void {
    let byName = this.byNamespace.get(namespace);
    if (!byName) this.byNamespace.set(namespace, (byName = new Map()));
    byName.set(name, value);
  }

  delete(namespace: string, name: string): T | undefined {
    const byName = this.byNamespace.get(namespace);
    const value = byName?.get(name);
    if (value === undefined) return undefined;
    byName?.delete(name);
    if (byName?.size === 0) this.byNamespace.delete(namespace);
    return value;
  }

  values(namespace: string): IterableIterator<T> | T[] {
    return this.byNamespace.get(namespace)?.values() ?? [];
  }

  sorted(namespace?: string): T[] {
    const namespaces = namespace === undefined ? [...this.byNamespace.keys()].sort() : [namespace];
    return namespaces.flatMap((ns) => {
      const byName = this.byNamespace.get(ns);
      return byName ? [...byName.keys()].sort().map((name) => byName.get(name) as T) : [];
    });
  }
}

export function newServiceRegistry(options: ServiceRegistryOptions): ServiceRegistryWriter {
  const useSlices = options.endpointSource === 'endpoint-slices';
  const services = new Nested<{ service: Service; content: string }>();
  const hosts = new Map<string, Service>();
  const workloads = new Nested<Workload>();
  const addresses = new Map<string, Set<string>>();
  const endpoints = new Map<string, { list: readonly Endpoint[]; content: string }>();
  const slices = new Nested<EndpointSliceInfo>();
  /** Slices by the Service they belong to (`namespace/service` → slice names). */
  const slicesOfService = new Map<string, Set<string>>();
  const namespaces = new Map<string, { info: NamespaceInfo; content: string }>();
  let version = 0;
  let sortedServices: Service[] | undefined;
  let sortedWorkloads: Workload[] | undefined;

  const touch = (): void => {
    version++;
    sortedServices = undefined;
    sortedWorkloads = undefined;
  };

  /** By service key: the `<namespace>/<address>` of its endpoints whose pod is not known yet. */
  const pendingOfService = new Map<string, Set<string>>();
  /** `<namespace>/<address>` → how many services have it pending. */
  const pendingAddresses = new Map<string, number>();
  const trackPending = (key: string, namespace: string, list: readonly Endpoint[]): void => {
    const now = new Set(list.filter((endpoint) => endpoint.podPending).map((endpoint) => keyOf(namespace, endpoint.address)));
    const before = pendingOfService.get(key) ?? new Set<string>();
    for (const address of before) {
      if (now.has(address)) continue;
      const refs = (pendingAddresses.get(address) ?? 1) - 1;
      if (refs === 0) pendingAddresses.delete(address);
      else pendingAddresses.set(address, refs);
    }
    for (const address of now) if (!before.has(address)) pendingAddresses.set(address, (pendingAddresses.get(address) ?? 0) + 1);
    if (now.size === 0) pendingOfService.delete(key);
    else pendingOfService.set(key, now);
  };

  /** Rebuilds one Service's endpoints; true when they changed. */
  const recompute = (namespace: string, name: string): boolean => {
    const key = keyOf(namespace, name);
    const service = services.get(namespace, name)?.service;
    let list: Endpoint[] = [];
    if (service) {
      if (useSlices) {
        const names = slicesOfService.get(key) ?? new Set<string>();
        const own = [...names].sort().flatMap((sliceName) => slices.get(namespace, sliceName) ?? []);
        list = buildSliceEndpoints(service, own, (pod) => workloads.get(namespace, pod), options.clusterId);
      } else {
        list = buildPodEndpoints(service, workloads.values(namespace));
      }
    }
    trackPending(key, namespace, list);
    const content = list.length === 0 ? '' : stableJson(list);
    const before = endpoints.get(key);
    if ((before?.content ?? '') === content) return false;
    if (content === '') endpoints.delete(key);
    else endpoints.set(key, { list, content });
    return true;
  };

  const recomputeAll = (keys: Iterable<string>): ObjectKey[] => {
    const changed: ObjectKey[] = [];
    for (const key of [...new Set(keys)].sort()) {
      const { namespace, name } = splitKey(key);
      if (recompute(namespace, name)) changed.push({ namespace, name });
    }
    return changed;
  };

  /** Services whose endpoints can depend on this pod: selected by its labels, or listing it in a slice. */
  const servicesForPod = (namespace: string, podName: string, labelSets: readonly Workload[]): string[] => {
    const keys: string[] = [];
    if (useSlices) {
      for (const slice of slices.values(namespace)) {
        if (slice.serviceName !== '' && slice.endpoints.some((endpoint) => endpoint.podName === podName)) {
          keys.push(keyOf(namespace, slice.serviceName));
        }
      }
      return keys;
    }
    for (const { service } of services.values(namespace)) {
      if (labelSets.some((workload) => selectsWorkload(service, workload))) keys.push(keyOf(namespace, service.name));
    }
    return keys;
  };

  const indexAddress = (workload: Workload, add: boolean): void => {
    if (workload.address === '') return;
    const key = keyOf(workload.namespace, workload.name);
    let set = addresses.get(workload.address);
    if (add) {
      if (!set) addresses.set(workload.address, (set = new Set()));
      set.add(key);
    } else if (set) {
      set.delete(key);
      if (set.size === 0) addresses.delete(workload.address);
    }
  };

  const linkSlice = (slice: EndpointSliceInfo, add: boolean): void => {
    if (slice.serviceName === '') return;
    const key = keyOf(slice.namespace, slice.serviceName);
    let set = slicesOfService.get(key);
    if (add) {
      if (!set) slicesOfService.set(key, (set = new Set()));
      set.add(slice.name);
    } else if (set) {
      set.delete(slice.name);
      if (set.size === 0) slicesOfService.delete(key);
    }
  };

  const change = (serviceChanged: boolean, identityChanged: boolean, endpointsChanged: ObjectKey[], changed = true): RegistryChange => ({
    changed: changed || serviceChanged || identityChanged || endpointsChanged.length > 0,
    serviceChanged,
    identityChanged,
    endpointsChanged,
  });

  const registry: ServiceRegistryWriter = {
    service: (namespace, name) => services.get(namespace, name)?.service,

    services(namespace) {
      if (namespace !== undefined) return services.sorted(namespace).map((entry) => entry.service);
      sortedServices ??= services.sorted().map((entry) => entry.service);
      return sortedServices;
    },

    serviceByHost: (hostname) => hosts.get(hostname),

    workload: (namespace, name) => workloads.get(namespace, name),

    workloads(namespace) {
      if (namespace !== undefined) return workloads.sorted(namespace);
      sortedWorkloads ??= workloads.sorted();
      return sortedWorkloads;
    },

    workloadsMatching(namespace, selector) {
      return workloads.sorted(namespace).filter((workload) => labelsMatch(selector, workload.labels));
    },

    workloadsByAddress(address) {
      return [...(addresses.get(address) ?? [])].sort().flatMap((key) => {
        const { namespace, name } = splitKey(key);
        return workloads.get(namespace, name) ?? [];
      });
    },

    servicesOfWorkload(workload) {
      return services
        .sorted(workload.namespace)
        .map((entry) => entry.service)
        .filter((service) => selectsWorkload(service, workload));
    },

    endpoints(namespace, name, servicePort) {
      const list = endpoints.get(keyOf(namespace, name))?.list ?? [];
      return servicePort === undefined ? list : list.filter((endpoint) => endpoint.servicePort === servicePort);
    },

    servicePortsForContainerPort(namespace, workloadName, containerPort) {
      const workload = workloads.get(namespace, workloadName);
      if (!workload) return [];
      return registry
        .servicesOfWorkload(workload)
        .flatMap((service) => service.ports.filter((port) => resolveTargetPort(port, workload) === containerPort).map((port) => ({ service, port })));
    },

    servicePortsForWorkload(namespace, selector) {
      const selected = registry.workloadsMatching(namespace ?? 'default', selector);
      if (selected.length === 0) return undefined;
      const ports = new Set<number>();
      for (const workload of selected) {
        for (const service of registry.servicesOfWorkload(workload)) {
          for (const port of service.ports) {
            const target = resolveTargetPort(port, workload);
            if (target !== undefined) ports.add(target);
          }
        }
      }
      return [...ports].sort((a, b) => a - b);
    },

    serviceAccounts(namespace, name) {
      const accounts = new Set<string>();
      for (const endpoint of registry.endpoints(namespace, name)) {
        if (endpoint.serviceAccount !== '') accounts.add(endpoint.serviceAccount);
      }
      return [...accounts].sort();
    },

    namespace: (name) => namespaces.get(name)?.info,

    namespaces: () => [...namespaces.keys()].sort().map((name) => (namespaces.get(name) as { info: NamespaceInfo }).info),

    endpointSlice: (namespace, name) => slices.get(namespace, name),

    endpointsPendingPod: () => pendingAddresses.size,

    version: () => version,

    applyService(service) {
      const { resourceVersion: _ignored, ...comparable } = service;
      const content = stableJson(comparable);
      const before = services.get(service.namespace, service.name);
      if (before?.content === content) return NO_CHANGE;
      if (before) hosts.delete(before.service.hostname);
      services.set(service.namespace, service.name, { service, content });
      hosts.set(service.hostname, service);
      touch();
      return change(true, false, recomputeAll([keyOf(service.namespace, service.name)]));
    },

    deleteService(namespace, name) {
      const before = services.delete(namespace, name);
      if (!before) return NO_CHANGE;
      hosts.delete(before.service.hostname);
      touch();
      return change(true, false, recomputeAll([keyOf(namespace, name)]));
    },

    applyWorkload(workload) {
      const before = workloads.get(workload.namespace, workload.name);
      if (before && stableJson(before) === stableJson(workload)) return NO_CHANGE;
      if (before) indexAddress(before, false);
      workloads.set(workload.namespace, workload.name, workload);
      indexAddress(workload, true);
      touch();
      const identityChanged =
        before !== undefined &&
        (before.serviceAccount !== workload.serviceAccount ||
          before.nodeName !== workload.nodeName ||
          before.clusterId !== workload.clusterId ||
          stableJson(before.labels) !== stableJson(workload.labels));
      const affected = servicesForPod(workload.namespace, workload.name, before ? [before, workload] : [workload]);
      return change(false, identityChanged, recomputeAll(affected));
    },

    deleteWorkload(namespace, name) {
      const before = workloads.delete(namespace, name);
      if (!before) return NO_CHANGE;
      indexAddress(before, false);
      touch();
      return change(false, false, recomputeAll(servicesForPod(namespace, name, [before])));
    },

    applyEndpointSlice(slice) {
      const before = slices.get(slice.namespace, slice.name);
      if (before && stableJson(before) === stableJson(slice)) return NO_CHANGE;
      if (before) linkSlice(before, false);
      slices.set(slice.namespace, slice.name, slice);
      linkSlice(slice, true);
      touch();
      const affected = [slice.serviceName, before?.serviceName ?? ''].filter((name) => name !== '').map((name) => keyOf(slice.namespace, name));
      return change(false, false, useSlices ? recomputeAll(affected) : []);
    },

    deleteEndpointSlice(namespace, name) {
      const before = slices.delete(namespace, name);
      if (!before) return NO_CHANGE;
      linkSlice(before, false);
      touch();
      const affected = before.serviceName === '' ? [] : [keyOf(namespace, before.serviceName)];
      return change(false, false, useSlices ? recomputeAll(affected) : []);
    },

    applyNamespace(info) {
      const content = stableJson(info);
      if (namespaces.get(info.name)?.content === content) return false;
      namespaces.set(info.name, { info, content });
      touch();
      return true;
    },

    deleteNamespace(name) {
      if (!namespaces.delete(name)) return false;
      touch();
      return true;
    },
  };
  return registry;
}
