import { ANNOTATIONS, LABELS } from '../../names/index.js';
import type { KubeObject } from '../../runtime/index.js';
import type { ContainerPort, EndpointSliceInfo, NamespaceInfo, PortProtocol, Service, ServicePort, Workload } from './registry-types.js';

/**
 * Core objects into registry types. Sources hand over whatever the API server or a file holds,
 * so every field is read defensively: a malformed port is skipped, not fatal.
 */

export function serviceFromObject(object: KubeObject, domain: string): Service | undefined {
  const { name, namespace } = nameOf(object);
  if (name === '') return undefined;
  const spec = record(object['spec']);
  const ports: ServicePort[] = [];
  for (const raw of array(spec['ports'])) {
    const port = record(raw);
    const number = portNumber(port['port']);
    if (number === undefined) continue;
    const target = port['targetPort'];
    const targetPort = typeof target === 'string' && target !== '' ? target : (portNumber(target) ?? number);
    const appProtocol = typeof port['appProtocol'] === 'string' ? port['appProtocol'] : undefined;
    ports.push({
      name: typeof port['name'] === 'string' ? port['name'] : '',
      port: number,
      targetPort,
      protocol: protocolOf(port['protocol']),
      ...(appProtocol !== undefined ? { appProtocol } : {}),
    });
  }
  const selector = stringMap(spec['selector']);
  const clusterIp = typeof spec['clusterIP'] === 'string' ? spec['clusterIP'] : undefined;
  return {
    name,
    namespace,
    hostname: `${name}.${namespace}.svc.${domain}`,
    ports,
    // As Kubernetes: an empty selector selects nothing (endpoints are managed by hand).
    ...(Object.keys(selector).length > 0 ? { selector } : {}),
    ...(clusterIp !== undefined ? { clusterIp } : {}),
    type: typeof spec['type'] === 'string' ? spec['type'] : 'ClusterIP',
    labels: stringMap(object.metadata?.labels),
    resourceVersion: object.metadata?.resourceVersion ?? '',
  };
}

export function workloadFromPod(object: KubeObject, clusterId: string): Workload | undefined {
  const { name, namespace } = nameOf(object);
  if (name === '') return undefined;
  const spec = record(object['spec']);
  const status = record(object['status']);
  const labels = stringMap(object.metadata?.labels);
  const annotations = stringMap(object.metadata?.annotations);
  const conditions = status['conditions'];
  const readyCondition = array(conditions)
    .map(record)
    .find((condition) => condition['type'] === 'Ready');
  const ready = Array.isArray(conditions) ? readyCondition?.['status'] === 'True' : true;
  const phase = status['phase'];
  const containerPorts: ContainerPort[] = [];
  for (const container of array(spec['containers'])) {
    for (const raw of array(record(container)['ports'])) {
      const port = record(raw);
      const number = portNumber(port['containerPort']);
      if (number === undefined) continue;
      containerPorts.push({
        name: typeof port['name'] === 'string' ? port['name'] : '',
        containerPort: number,
        protocol: protocolOf(port['protocol']),
      });
    }
  }
  const serviceAccount = firstString(spec['serviceAccountName'], spec['serviceAccount']) ?? 'default';
  return {
    name,
    namespace,
    address: typeof status['podIP'] === 'string' ? status['podIP'] : '',
    labels,
    serviceAccount,
    hasSidecar: ANNOTATIONS.status in annotations || labels[LABELS.tlsMode] === 'mesh',
    nodeName: typeof spec['nodeName'] === 'string' ? spec['nodeName'] : '',
    clusterId,
    ready,
    active: phase !== 'Succeeded' && phase !== 'Failed' && !object.metadata?.['deletionTimestamp'],
    containerPorts,
    ...(typeof spec['hostname'] === 'string' && spec['hostname'] !== '' ? { hostname: spec['hostname'] } : {}),
    ...(typeof spec['subdomain'] === 'string' && spec['subdomain'] !== '' ? { subdomain: spec['subdomain'] } : {}),
  };
}

export function namespaceFromObject(object: KubeObject): NamespaceInfo | undefined {
  const name = object.metadata?.name ?? '';
  if (name === '') return undefined;
  return { name, labels: stringMap(object.metadata?.labels) };
}

export function endpointSliceFromObject(object: KubeObject): EndpointSliceInfo | undefined {
  const { name, namespace } = nameOf(object);
  if (name === '') return undefined;
  const addressType = object['addressType'];
  const usable = addressType === 'IPv4' || addressType === 'IPv6';
  const ports = array(object['ports']).flatMap((raw) => {
    const port = record(raw);
    const number = portNumber(port['port']);
    if (number === undefined) return [];
    return [{ name: typeof port['name'] === 'string' ? port['name'] : '', port: number, protocol: protocolOf(port['protocol']) }];
  });
  const endpoints = !usable
    ? []
    : array(object['endpoints']).map((raw) => {
        const endpoint = record(raw);
        const targetRef = record(endpoint['targetRef']);
        const podName = targetRef['kind'] === 'Pod' && typeof targetRef['name'] === 'string' ? targetRef['name'] : undefined;
        return {
          addresses: array(endpoint['addresses']).filter((a): a is string => typeof a === 'string' && a !== ''),
          // As the reference: an unknown readiness counts as ready.
          ready: record(endpoint['conditions'])['ready'] !== false,
          ...(podName !== undefined ? { podName } : {}),
          nodeName: typeof endpoint['nodeName'] === 'string' ? endpoint['nodeName'] : '',
        };
      });
  return { name, namespace, serviceName: stringMap(object.metadata?.labels)[LABELS.serviceName] ?? '', ports, endpoints };
}

function nameOf(object: KubeObject): { name: string; namespace: string } {
  return { name: object.metadata?.name ?? '', namespace: object.metadata?.namespace ?? '' };
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function array(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(record(value))) {
    if (typeof item === 'string') out[key] = item;
  }
  return out;
}

function portNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535 ? value : undefined;
}

function protocolOf(value: unknown): PortProtocol {
  return value === 'UDP' || value === 'SCTP' ? value : 'TCP';
}

function firstString(...values: unknown[]): string | undefined {
  return values.find((value): value is string => typeof value === 'string' && value !== '');
}
