import type { Destination, VirtualServiceSpec } from '../../crds/index.js';

/** Every destination a VirtualService sends (or mirrors) traffic to. */
export function destinationsOf(spec: VirtualServiceSpec): Destination[] {
  const out: Destination[] = [];
  for (const route of spec.http ?? []) {
    for (const entry of route.route ?? []) out.push(entry.destination);
    if (route.mirror !== undefined) out.push(route.mirror);
    for (const mirror of route.mirrors ?? []) out.push(mirror.destination);
  }
  for (const route of [...(spec.tcp ?? []), ...(spec.tls ?? [])]) {
    for (const entry of route.route ?? []) out.push(entry.destination);
  }
  return out;
}

/** Every gateway a VirtualService names, at the top and in its matches, without repeats. */
export function gatewaysOf(spec: VirtualServiceSpec): string[] {
  const names = [...(spec.gateways ?? [])];
  for (const route of [...(spec.http ?? []), ...(spec.tcp ?? []), ...(spec.tls ?? [])]) {
    for (const match of route.match ?? []) names.push(...(match.gateways ?? []));
  }
  return [...new Set(names)];
}

/** Whether the VirtualService applies to sidecars: no gateways, or `mesh` among them. */
export function appliesToMesh(spec: VirtualServiceSpec): boolean {
  return spec.gateways === undefined || spec.gateways.length === 0 || spec.gateways.includes('mesh');
}

/** Whether the VirtualService binds to gateways alone (no `mesh`). */
export function appliesOnlyToGateways(spec: VirtualServiceSpec): boolean {
  return !appliesToMesh(spec);
}
