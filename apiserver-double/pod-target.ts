import type { KubeObject } from '../runtime/index.js';
import type { ObjectStore } from './object-store.js';
import { isPlainObject } from './object-util.js';
import { badRequest, notFound, StatusError } from './status-error.js';

/** Where a pod's port is reached from this process (the double has no pod network). */
export interface PodAddress {
  host: string;
  port: number;
}

/**
 * Maps a pod's port to a loopback `host:port`; `undefined` falls back to `status.podIP` with the
 * same port.
 */
export type PodResolver = (namespace: string, pod: string, port: number) => PodAddress | undefined;

/** A stored pod and what the subresources read of it. */
export interface PodView {
  namespace: string;
  name: string;
  uid: string;
  phase: string;
  nodeName: string;
  podIP: string;
  /** Names of the app containers, in order. */
  containers: string[];
  /** The first declared container port, if any (what the proxy uses without a port). */
  firstContainerPort?: number;
  startTime?: string;
  object: KubeObject;
}

/** Reads pods for the pod subresources, with the real API server's refusals. */
export class PodTargets {
  constructor(
    private readonly store: ObjectStore,
    private readonly resolver: PodResolver | undefined,
  ) {}

  /** The pod, or the real 404 Status. */
  get(namespace: string, name: string): PodView {
    const object = this.store.get('/pods', namespace, name);
    if (!object) throw notFound('', 'pods', name);
    return podView(object);
  }

  exists(namespace: string, name: string): boolean {
    return this.store.get('/pods', namespace, name) !== undefined;
  }

  /** The pod, refused as the API server and kubelet refuse streaming to a pod that does not run. */
  running(namespace: string, name: string): PodView {
    const pod = this.get(namespace, name);
    if (pod.nodeName === '' && pod.phase !== 'Running') throw badRequest(`pod ${name} does not have a host assigned`);
    if (pod.phase !== 'Running') throw new StatusError(500, 'InternalError', `pod ${name} is not running (phase ${pod.phase})`);
    return pod;
  }

  /** Where `port` of the pod is dialled, or undefined when the pod has no address. */
  address(pod: PodView, port: number): PodAddress | undefined {
    const resolved = this.resolver?.(pod.namespace, pod.name, port);
    if (resolved) return resolved;
    return pod.podIP ? { host: pod.podIP, port } : undefined;
  }
}

function podView(object: KubeObject): PodView {
  const spec = isPlainObject(object['spec']) ? object['spec'] : {};
  const status = isPlainObject(object['status']) ? object['status'] : {};
  const containers = Array.isArray(spec['containers']) ? spec['containers'].filter(isPlainObject) : [];
  let firstContainerPort: number | undefined;
  for (const container of containers) {
    const ports = Array.isArray(container['ports']) ? container['ports'].filter(isPlainObject) : [];
    const port = ports[0]?.['containerPort'];
    if (typeof port === 'number') {
      firstContainerPort = port;
      break;
    }
  }
  const text = (value: unknown): string => (typeof value === 'string' ? value : '');
  return {
    namespace: object.metadata?.namespace ?? '',
    name: object.metadata?.name ?? '',
    uid: object.metadata?.uid ?? '',
    phase: text(status['phase']),
    nodeName: text(spec['nodeName']),
    podIP: text(status['podIP']),
    containers: containers.map((c) => text(c['name'])),
    ...(firstContainerPort !== undefined ? { firstContainerPort } : {}),
    ...(typeof status['startTime'] === 'string' ? { startTime: status['startTime'] } : {}),
    object,
  };
}

/** `[scheme:]name[:port]` of a proxy path segment. */
export function parseProxyName(segment: string): { scheme: 'http' | 'https'; name: string; port?: string } {
  const parts = segment.split(':');
  if (parts.length === 3 && (parts[0] === 'http' || parts[0] === 'https')) {
    return { scheme: parts[0], name: parts[1] ?? '', ...(parts[2] ? { port: parts[2] } : {}) };
  }
  if (parts.length === 2) return { scheme: 'http', name: parts[0] ?? '', ...(parts[1] ? { port: parts[1] } : {}) };
  return { scheme: 'http', name: segment };
}
