import { resolveTargetPort, selectsWorkload, type Service, type ServicePort, type Workload } from '../../controllers/index.js';
import type { Proxy } from '../proxy.js';
import type { PushContext } from '../model/push-context.js';
import { servicePortProtocol } from '../model/service-port-protocol.js';

/**
 * The proxy's own workload: the pod its id names (`<pod>.<namespace>`), else the workload at one
 * of its addresses in its namespace.
 */
export function workloadOfProxy(push: PushContext, proxy: Proxy): Workload | undefined {
  const dot = proxy.id.lastIndexOf('.');
  if (dot > 0) {
    const byName = push.workloads.get(`${proxy.id.slice(dot + 1)}/${proxy.id.slice(0, dot)}`);
    if (byName) return byName;
  }
  for (const address of proxy.ipAddresses) {
    const found = push.workloadsByAddress.get(address)?.find((workload) => workload.namespace === proxy.configNamespace);
    if (found) return found;
  }
  return undefined;
}

/** One container port a Service sends to on this workload. */
export interface InboundPort {
  readonly targetPort: number;
  readonly service: Service;
  readonly servicePort: ServicePort;
}

/**
 * The container ports the Services selecting the workload reach, sorted by target port; on a
 * port two Services share, the first Service by hostname wins. `onConflict` hears of a port that
 * another Service reaches with another protocol, as the reference reports an inbound listener
 * conflict (the same protocol is no conflict: one chain serves both).
 */
export function inboundPortsOf(push: PushContext, workload: Workload, onConflict?: (targetPort: number) => void): InboundPort[] {
  const byPort = new Map<number, InboundPort>();
  // A Service selects pods of its own namespace only.
  for (const service of push.servicesByNamespace.get(workload.namespace) ?? []) {
    if (!selectsWorkload(service, workload)) continue;
    for (const servicePort of service.ports) {
      const targetPort = resolveTargetPort(servicePort, workload);
      if (targetPort === undefined) continue;
      const taken = byPort.get(targetPort);
      if (taken) {
        if (taken.service !== service && servicePortProtocol(taken.servicePort) !== servicePortProtocol(servicePort)) onConflict?.(targetPort);
        continue;
      }
      byPort.set(targetPort, { targetPort, service, servicePort });
    }
  }
  return [...byPort.values()].sort((a, b) => a.targetPort - b.targetPort);
}
