import type { CustomObjectsApi, KubeConfig, V1Service } from '@kubernetes/client-node';
import { apiVersionOf, KINDS } from '../../crds/index.js';
import { errorMessage, MeshError, UsageError } from '../../runtime/index.js';
import type { KubeApi } from '../kube/kube-client.js';

/** What `x add-to-mesh external-service <name> <ip>[,<ip>…] [<protocol>:]<port>…` is given. */
export interface ExternalServiceInput {
  readonly name: string;
  readonly namespace: string;
  readonly addresses: readonly string[];
  readonly ports: readonly ExternalServicePort[];
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly serviceAccount: string;
}

export interface ExternalServicePort {
  /**
   * `<protocol>-<port>`, lower case: the reference keeps the protocol as typed here (`TCP-8888`),
   * which no port name may be (DNS-1123), so its entry would be refused; its Service's is lowered.
   */
  readonly name: string;
  readonly number: number;
  /** The protocol as the reference spells it (`HTTP`, `GRPC-Web`, `Mongo`…). */
  readonly protocol: string;
}

const PROTOCOLS = ['HTTP', 'HTTPS', 'HTTP2', 'HTTP_PROXY', 'GRPC', 'GRPC-Web', 'TCP', 'TLS', 'UDP', 'Mongo', 'Redis', 'MySQL'];
const SERVICE_ACCOUNT_ANNOTATION = 'kubernetes.io/service-account.name';

/** The name of the ServiceEntry an external service gets: `mesh-expansion-<name>`. */
export function externalServiceEntryName(name: string): string {
  return `mesh-expansion-${name}`;
}

/**
 * Reads the positional arguments as the reference does: the name, the addresses (comma-separated),
 * then ports as `<protocol>:<port>` (a bare port is its own protocol name, and refused).
 */
export function parseExternalServiceArgs(args: readonly string[]): { name: string; addresses: string[]; ports: ExternalServicePort[] } {
  const [name, addresses, ...ports] = args;
  if (name === undefined || addresses === undefined || ports.length === 0) throw new UsageError('provide service name, IP and Port List');
  return { name, addresses: addresses.split(','), ports: ports.map(parsePort) };
}

function parsePort(text: string): ExternalServicePort {
  const colon = text.indexOf(':');
  const number = colon < 0 ? text : text.slice(colon + 1);
  if (!/^\d+$/.test(number) || Number(number) < 1 || Number(number) > 65_535) throw new UsageError(`invalid port format ${text}`);
  const name = colon < 0 ? number : text.slice(0, colon);
  const protocol = PROTOCOLS.find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  if (!protocol) throw new UsageError(`protocol ${name} is not supported by the mesh`);
  return { name: `${name}-${number}`.toLowerCase(), number: Number(number), protocol };
}

/**
 * The two objects that put an external service in the mesh, as the reference makes them: a
 * MESH_INTERNAL, STATIC ServiceEntry `mesh-expansion-<name>` for `<name>.<namespace>.svc.<domain>`
 * with an endpoint per address (labelled), and a Service `<name>` without a selector (for DNS and
 * a cluster IP), labelled, annotated, with the service account in an annotation.
 */
export function externalServiceObjects(input: ExternalServiceInput, domain = 'cluster.local'): { serviceEntry: object; service: V1Service } {
  const serviceEntry = {
    apiVersion: apiVersionOf('ServiceEntry'),
    kind: 'ServiceEntry',
    metadata: { name: externalServiceEntryName(input.name), namespace: input.namespace },
    spec: {
      hosts: [`${input.name}.${input.namespace}.svc.${domain}`],
      ports: input.ports.map((port) => ({ number: port.number, protocol: port.protocol, name: port.name })),
      endpoints: input.addresses.map((address) => ({ address, ...(Object.keys(input.labels).length > 0 ? { labels: { ...input.labels } } : {}) })),
      location: 'MESH_INTERNAL',
      resolution: 'STATIC',
    },
  };
  const service: V1Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: { ...input.labels },
      annotations: { ...input.annotations, [SERVICE_ACCOUNT_ANNOTATION]: input.serviceAccount },
    },
    spec: { ports: input.ports.map((port) => ({ name: port.name, port: port.number })) },
  };
  return { serviceEntry, service };
}

const notFound = (k8s: KubeApi, error: unknown): boolean => error instanceof k8s.ApiException && error.code === 404;

async function exists(k8s: KubeApi, read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (error) {
    if (notFound(k8s, error)) return false;
    throw error;
  }
}

function entryApi(k8s: KubeApi, kubeConfig: KubeConfig): { api: CustomObjectsApi; group: string; version: string; plural: string } {
  const { group, version, plural } = KINDS.ServiceEntry;
  return { api: kubeConfig.makeApiClient(k8s.CustomObjectsApi), group, version, plural };
}

/** Creates both objects, refusing when either exists; returns the lines the reference prints. */
export async function addExternalService(kubeConfig: KubeConfig, input: ExternalServiceInput): Promise<string> {
  const k8s = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const { api, group, version, plural } = entryApi(k8s, kubeConfig);
  const { namespace, name } = input;
  const entryName = externalServiceEntryName(name);
  if (await exists(k8s, () => core.readNamespacedService({ name, namespace })))
    throw new MeshError('external-service-exists', `service "${name}" already exists, skip`);
  if (await exists(k8s, () => api.getNamespacedCustomObject({ group, version, namespace, plural, name: entryName })))
    throw new MeshError('external-service-exists', `service entry "${entryName}" already exists, skip`);
  const { serviceEntry, service } = externalServiceObjects(input);
  await api.createNamespacedCustomObject({ group, version, namespace, plural, body: serviceEntry }).catch((error: unknown) => {
    throw new MeshError('external-service-write-failed', `failed to create service entry ${describeApiError(k8s, error)}`, { cause: error });
  });
  let out = `ServiceEntry "${entryName}.${namespace}" has been created in the mesh for the external service "${name}"\n`;
  await core.createNamespacedService({ namespace, body: service }).catch((error: unknown) => {
    throw new MeshError('external-service-write-failed', `failed to create Kubernetes service ${describeApiError(k8s, error)}`, { cause: error });
  });
  out += `Kubernetes Service "${name}.${namespace}" has been created in the mesh for the external service "${name}"\n`;
  return out;
}

/** Deletes the Service, then the ServiceEntry, refusing when either is missing; returns the lines printed. */
export async function removeExternalService(kubeConfig: KubeConfig, namespace: string, name: string): Promise<string> {
  const k8s = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const { api, group, version, plural } = entryApi(k8s, kubeConfig);
  const entryName = externalServiceEntryName(name);
  if (!(await exists(k8s, () => core.readNamespacedService({ name, namespace }))))
    throw new MeshError('external-service-not-found', `service "${name}" does not exist, skip`);
  if (!(await exists(k8s, () => api.getNamespacedCustomObject({ group, version, namespace, plural, name: entryName }))))
    throw new MeshError('external-service-not-found', `service entry "${entryName}" does not exist, skip`);
  await core.deleteNamespacedService({ name, namespace }).catch((error: unknown) => {
    throw new MeshError('external-service-write-failed', `failed to delete Kubernetes service "${name}" due to ${describeApiError(k8s, error)}`, {
      cause: error,
    });
  });
  let out = `Kubernetes Service "${name}.${namespace}" has been deleted for external service "${name}"\n`;
  await api.deleteNamespacedCustomObject({ group, version, namespace, plural, name: entryName }).catch((error: unknown) => {
    throw new MeshError('external-service-write-failed', `failed to delete service entry "${entryName}" due to ${describeApiError(k8s, error)}`, {
      cause: error,
    });
  });
  out += `Service Entry "${entryName}" has been deleted for external service "${name}"\n`;
  return out;
}

/** The API server's own message (a Status body), else the HTTP code. */
function describeApiError(k8s: KubeApi, error: unknown): string {
  if (!(error instanceof k8s.ApiException)) return errorMessage(error);
  const body: unknown = typeof error.body === 'string' ? parseJson(error.body) : error.body;
  const message = (body as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : `HTTP ${error.code}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
