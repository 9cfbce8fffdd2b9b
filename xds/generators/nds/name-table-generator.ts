import { isIP } from 'node:net';
import type { Endpoint, Service } from '../../../controllers/index.js';
import { NAME_TABLE_TYPE } from '../../envoy/type-urls.js';
import type { Generator } from '../../generator.js';
import type { PushContext } from '../../model/push-context.js';
import { servicePortKey } from '../../model/push-context.js';
import { visibleServices } from '../../model/service-visibility.js';
import { allocatedAddressesFor } from '../../model/auto-allocation.js';
import type { Proxy } from '../../proxy.js';

/** One host of the name table, as `NameTable.NameInfo` (snake_case, as encoded). */
export interface NameInfo {
  readonly ips: readonly string[];
  /** `Kubernetes` for Services, `External` for ServiceEntries. */
  readonly registry: string;
  /** Services only: their name and namespace, for `name`, `name.ns` and `name.ns.svc`. */
  readonly shortname?: string;
  readonly namespace?: string;
}

/** Kinds whose change cannot change any name table: a push of only these leaves NDS alone, as the reference does. */
const KINDS_WITHOUT_NAMES: ReadonlySet<string> = new Set([
  'Gateway',
  'VirtualService',
  'DestinationRule',
  'Secret',
  'PeerAuthentication',
  'RequestAuthentication',
  'AuthorizationPolicy',
  'WorkloadEntry',
  'WorkloadGroup',
  'MeshConfig',
  'ConfigMap',
]);

/**
 * NDS: the hosts a proxy sees (the exportTo of ServiceEntries applied) with their addresses, for
 * the agent's DNS proxy. A Service's cluster IP, or a headless Service's ready endpoints; a
 * ServiceEntry's IP addresses, or those allocated to it for a proxy that asked (`DNS_AUTO_ALLOCATE`
 * with DNS capture). One service per host, as the model keeps it (a Service over an
 * entry of its host, the oldest of several entries). Hosts without an address are left out: the
 * agent then asks upstream.
 */
export function newNameTableGenerator(): Generator<PushContext> {
  return {
    typeUrl: NAME_TABLE_TYPE,
    generate(proxy, push, request) {
      if (request.configsUpdated.length > 0 && request.configsUpdated.every((key) => KINDS_WITHOUT_NAMES.has(key.kind))) return undefined;
      return { resources: [{ name: '', resource: () => ({ table: Object.fromEntries(buildNameTable(proxy, push)) }) }] };
    },
  };
}

/** The name table of one proxy, sorted by host. */
export function buildNameTable(proxy: Proxy, push: PushContext): Map<string, NameInfo> {
  const table = new Map<string, NameInfo>();
  for (const service of visibleServices(push, proxy.configNamespace)) {
    if (!service.entry) {
      const ips = kubernetesServiceIps(service, push);
      if (ips.length > 0) table.set(service.hostname, { ips, registry: 'Kubernetes', shortname: service.name, namespace: service.namespace });
      if (service.clusterIp === 'None') for (const [host, info] of podNames(service, push)) table.set(host, info);
      continue;
    }
    const written = service.entry.addresses.filter((address) => isIP(address) !== 0);
    const ips = written.length > 0 ? written : allocatedAddressesFor(push, proxy, service);
    if (ips.length > 0) table.set(service.hostname, { ips, registry: 'External' });
  }
  return new Map([...table].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A cluster IP; for a headless Service (`None`), the addresses of its ready endpoints (of its first port, as the reference reads them). */
function kubernetesServiceIps(service: Service, push: PushContext): string[] {
  if (service.clusterIp !== undefined && service.clusterIp !== 'None') return isIP(service.clusterIp) !== 0 ? [service.clusterIp] : [];
  if (service.clusterIp !== 'None') return [];
  return [...new Set(readyEndpoints(service, push).map((endpoint) => endpoint.address))].sort();
}

/** A headless Service's pods with `hostname` and `subdomain`: `<hostname>.<subdomain>.<ns>.svc.<domain>` (a StatefulSet's `db-0.db`). */
function podNames(service: Service, push: PushContext): Map<string, NameInfo> {
  const names = new Map<string, NameInfo>();
  const domain = service.hostname.slice(service.hostname.indexOf('.') + 1);
  for (const endpoint of readyEndpoints(service, push)) {
    const pod = endpoint.workload ? push.workloads.get(`${endpoint.workload.namespace}/${endpoint.workload.name}`) : undefined;
    if (!pod?.hostname || !pod.subdomain) continue;
    const shortname = `${pod.hostname}.${pod.subdomain}`;
    names.set(`${shortname}.${domain}`, { ips: [endpoint.address], registry: 'Kubernetes', shortname, namespace: service.namespace });
  }
  return names;
}

function readyEndpoints(service: Service, push: PushContext): Endpoint[] {
  const [first] = service.ports;
  if (!first) return [];
  return (push.endpointsByServicePort.get(servicePortKey(service.hostname, first.port)) ?? []).filter(
    (endpoint) => endpoint.ready && isIP(endpoint.address) !== 0,
  );
}
