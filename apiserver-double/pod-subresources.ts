import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FaultState } from './faults.js';
import { ADMIN_USER } from './kind-defaults.js';
import { servePodLog } from './pod-log.js';
import type { PodLogDeps } from './pod-log.js';
import type { PortForwardServer } from './pod-portforward.js';
import { refuseUpgrade } from './pod-portforward.js';
import { servePodProxy } from './pod-proxy.js';
import { requestRecord } from './request-log.js';
import type { ApiRequestRecorder } from './request-log.js';
import { routeOf } from './request-path.js';
import type { ResourceRoute } from './request-path.js';
import type { ResourceRegistry } from './resource-registry.js';
import { badRequest, methodNotAllowed, notFound, StatusError } from './status-error.js';
import { errorMessage } from '../runtime/index.js';

const STREAMS = new Set(['log', 'proxy', 'portforward']);

/** A pod subresource the double streams rather than reads or writes as an object. */
export function isPodStream(route: ResourceRoute): boolean {
  return route.type.kind === 'Pod' && route.type.group === '' && route.name !== undefined && STREAMS.has(route.subresource ?? '');
}

/** pods/log and pods/proxy over plain HTTP (pods/portforward needs an upgrade). */
export async function servePodStream(
  deps: PodLogDeps,
  route: ResourceRoute,
  method: string,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const namespace = route.namespace ?? '';
  const name = route.name ?? '';
  switch (route.subresource) {
    case 'log':
      if (method !== 'GET') throw methodNotAllowed();
      return servePodLog(deps, namespace, name, url.searchParams, res);
    case 'proxy':
      return servePodProxy(deps.pods, namespace, name, url, req, res);
    default:
      deps.pods.get(namespace, name);
      throw badRequest('Upgrade request required');
  }
}

export interface UpgradeDeps {
  registry: ResourceRegistry;
  faults: FaultState;
  portForward: PortForwardServer;
  onRequest?: ApiRequestRecorder;
}

/** The server's `upgrade` listener: WebSocket pods/portforward, refused with a Status otherwise. */
export function newUpgradeHandler(deps: UpgradeDeps): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    if (deps.faults.refusing) {
      socket.destroy();
      return;
    }
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://double.invalid');
    const route = routeOf(url.pathname, deps.registry);
    try {
      if (route.kind !== 'resource' || route.subresource !== 'portforward' || !isPodStream(route)) {
        throw route.kind === 'resource' ? badRequest('the server does not support upgrades on this resource') : notFound('', '', url.pathname);
      }
      deps.onRequest?.(requestRecord(req.method ?? 'GET', route, url.searchParams, ADMIN_USER.username));
      deps.portForward.upgrade(route.namespace ?? '', route.name ?? '', url.searchParams, req, socket, head);
    } catch (err) {
      refuseUpgrade(socket, err instanceof StatusError ? err : new StatusError(500, 'InternalError', `Internal error occurred: ${errorMessage(err)}`));
    }
  };
}
