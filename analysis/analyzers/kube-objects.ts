import type { V1Container, V1Pod, V1PodSpec, V1Service, V1ServicePort } from '@kubernetes/client-node';
import { labelsMatch } from '../../names/index.js';
import type { Resource } from '../snapshot.js';

/** Labels of a Kubernetes object, never undefined. */
export function labelsOf(object: { metadata?: { labels?: Record<string, string> } }): Record<string, string> {
  return object.metadata?.labels ?? {};
}

export function annotationsOf(object: { metadata?: { annotations?: Record<string, string> } }): Record<string, string> {
  return object.metadata?.annotations ?? {};
}

/** `k=v,k2=v2` with keys sorted, as Kubernetes prints a label selector. */
export function selectorString(selector: Readonly<Record<string, string>>): string {
  return Object.keys(selector)
    .sort()
    .map((key) => `${key}=${selector[key] ?? ''}`)
    .join(',');
}

/** Whether a Service selects the pod: same namespace and a non-empty selector the pod's labels hold (an empty one selects nothing). */
export function serviceSelects(service: Resource<V1Service>, podNamespace: string, podLabels: Readonly<Record<string, string>>): boolean {
  const selector = service.object.spec?.selector;
  return service.namespace === podNamespace && selector !== undefined && Object.keys(selector).length > 0 && labelsMatch(selector, podLabels);
}

/** The pods of `namespace` (every namespace when undefined) whose labels the selector matches. */
export function podsMatching(
  pods: readonly Resource<V1Pod>[],
  namespace: string | undefined,
  selector: Readonly<Record<string, string>> | undefined,
): Resource<V1Pod>[] {
  return pods.filter((pod) => (namespace === undefined || pod.namespace === namespace) && labelsMatch(selector, labelsOf(pod.object)));
}

/** The container ports of a pod spec, by number and by name. */
export function containerPortsOf(spec: V1PodSpec | undefined): { numbers: Set<number>; byName: Map<string, number> } {
  const numbers = new Set<number>();
  const byName = new Map<string, number>();
  for (const container of spec?.containers ?? []) {
    for (const port of container.ports ?? []) {
      numbers.add(port.containerPort);
      if (port.name !== undefined) byName.set(port.name, port.containerPort);
    }
  }
  return { numbers, byName };
}

/** The port a Service port sends to on the pod: its numeric targetPort, a named one resolved on the pod, or the port itself. */
export function targetPortOn(port: V1ServicePort, podSpec: V1PodSpec | undefined): number | undefined {
  const target = port.targetPort as number | string | undefined;
  if (target === undefined || target === '' || target === 0) return port.port;
  if (typeof target === 'number') return target;
  if (/^[0-9]+$/.test(target)) return Number(target);
  return containerPortsOf(podSpec).byName.get(target);
}

/** The containers of a pod spec other than the mesh proxy. */
export function applicationContainers(spec: V1PodSpec | undefined, proxyContainer: string): V1Container[] {
  return (spec?.containers ?? []).filter((container) => container.name !== proxyContainer);
}

/** How a Service port carries traffic, as the daemon reads it: `appProtocol` first, else the port name's prefix. */
export type PortProtocol = 'http' | 'opaque' | 'auto';

const HTTP_PROTOCOLS: ReadonlySet<string> = new Set(['http', 'http2', 'grpc', 'grpc-web', 'h2c']);
const OPAQUE_PROTOCOLS: ReadonlySet<string> = new Set(['tcp', 'tls', 'https', 'mongo', 'mysql', 'redis', 'udp', 'sctp']);

/** The declared protocol of a Service port (`http`, `tcp`…), or undefined when neither appProtocol nor the name declares one. */
export function declaredProtocol(port: V1ServicePort): string | undefined {
  const raw = (port.appProtocol ?? port.name?.split('-')[0] ?? '').toLowerCase();
  const name = raw.startsWith('kubernetes.io/') ? raw.slice('kubernetes.io/'.length) : raw;
  if (port.appProtocol !== undefined && port.appProtocol !== '') return name;
  return HTTP_PROTOCOLS.has(name) || OPAQUE_PROTOCOLS.has(name) ? name : undefined;
}

export function portProtocol(port: V1ServicePort): PortProtocol {
  if ((port.protocol ?? 'TCP') !== 'TCP') return 'opaque';
  const declared = declaredProtocol(port) ?? '';
  if (HTTP_PROTOCOLS.has(declared)) return 'http';
  if (OPAQUE_PROTOCOLS.has(declared)) return 'opaque';
  return 'auto';
}

/**
 * Whether an object is part of the mesh's own control plane, as the reference tells: a `mesh`
 * label (the daemon's `mesh: pilot`, a gateway's `mesh: ingressgateway`) or `release: mesh`.
 * Checks written for applications never report it.
 */
export function isMeshControlPlane(object: { readonly metadata?: { readonly labels?: Readonly<Record<string, string>> | undefined } | undefined }): boolean {
  const labels = object.metadata?.labels ?? {};
  return 'mesh' in labels || labels['release'] === 'mesh';
}

/** Namespaces whose workloads are the cluster's or the mesh's own, never asked to join the mesh. */
export function isSystemNamespace(namespace: string, rootNamespace: string, ignored: readonly string[]): boolean {
  return namespace === rootNamespace || ignored.includes(namespace);
}
