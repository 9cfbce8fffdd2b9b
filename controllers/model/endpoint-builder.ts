import { labelsMatch } from '../../names/index.js';
import type { Endpoint, EndpointSliceInfo, Service, ServicePort, Workload } from './registry-types.js';

/** The container port a service port reaches on this workload, or undefined when a named port is missing. */
export function resolveTargetPort(port: ServicePort, workload: Pick<Workload, 'containerPorts'>): number | undefined {
  if (typeof port.targetPort === 'number') return port.targetPort;
  return workload.containerPorts.find((candidate) => candidate.name === port.targetPort)?.containerPort;
}

/** True when the Service's selector picks the workload (a Service without selector picks none). */
export function selectsWorkload(service: Pick<Service, 'namespace' | 'selector'>, workload: Workload): boolean {
  return service.selector !== undefined && service.namespace === workload.namespace && labelsMatch(service.selector, workload.labels);
}

/**
 * Endpoints from the pods a Service selects: every active pod with an address, per service port,
 * at its resolved target port. Sorted by service port, address, port.
 */
export function buildPodEndpoints(service: Service, workloads: Iterable<Workload>): Endpoint[] {
  const endpoints: Endpoint[] = [];
  if (service.selector === undefined) return endpoints;
  for (const workload of workloads) {
    if (!workload.active || workload.address === '' || !selectsWorkload(service, workload)) continue;
    for (const servicePort of service.ports) {
      const port = resolveTargetPort(servicePort, workload);
      if (port === undefined) continue;
      endpoints.push(endpointOf(service, servicePort, workload.address, port, workload.ready, workload, workload.nodeName, workload.clusterId));
    }
  }
  return endpoints.sort(compareEndpoints);
}

/**
 * Endpoints from the EndpointSlices of a Service: each slice port carries the service port's name
 * and the target port number. Pod metadata (labels, service account, sidecar) comes from the pod
 * the endpoint refers to, when it is known. Duplicates across slices are kept once.
 */
export function buildSliceEndpoints(
  service: Service,
  slices: Iterable<EndpointSliceInfo>,
  podOf: (name: string) => Workload | undefined,
  clusterId: string,
): Endpoint[] {
  const endpoints: Endpoint[] = [];
  const seen = new Set<string>();
  for (const slice of slices) {
    for (const servicePort of service.ports) {
      const slicePort = slice.ports.find((candidate) => candidate.name === servicePort.name);
      if (!slicePort) continue;
      for (const endpoint of slice.endpoints) {
        const workload = endpoint.podName !== undefined ? podOf(endpoint.podName) : undefined;
        for (const address of endpoint.addresses) {
          const id = `${servicePort.port}/${address}/${slicePort.port}`;
          if (seen.has(id)) continue;
          seen.add(id);
          const nodeName = endpoint.nodeName || workload?.nodeName || '';
          endpoints.push(
            endpointOf(service, servicePort, address, slicePort.port, endpoint.ready, workload, nodeName, workload?.clusterId ?? clusterId, endpoint.podName),
          );
        }
      }
    }
  }
  return endpoints.sort(compareEndpoints);
}

function endpointOf(
  service: Service,
  servicePort: ServicePort,
  address: string,
  port: number,
  ready: boolean,
  workload: Workload | undefined,
  nodeName: string,
  clusterId: string,
  podName = workload?.name,
): Endpoint {
  return {
    address,
    port,
    servicePort: servicePort.port,
    servicePortName: servicePort.name,
    ready,
    ...(podName !== undefined ? { workload: { namespace: service.namespace, name: podName } } : {}),
    ...(podName !== undefined && workload === undefined ? { podPending: true as const } : {}),
    labels: workload?.labels ?? {},
    serviceAccount: workload?.serviceAccount ?? '',
    hasSidecar: workload?.hasSidecar ?? false,
    clusterId,
    nodeName,
  };
}

function compareEndpoints(a: Endpoint, b: Endpoint): number {
  return a.servicePort - b.servicePort || (a.address < b.address ? -1 : a.address > b.address ? 1 : 0) || a.port - b.port;
}
