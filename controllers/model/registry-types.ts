/** The service registry's own types: plain data, camelCase, never mutated once stored. */

export type PortProtocol = 'TCP' | 'UDP' | 'SCTP';

export interface ServicePort {
  /** Empty when the Service has a single unnamed port. */
  readonly name: string;
  readonly port: number;
  /** A container port number, or the name of a container port (resolved per workload). */
  readonly targetPort: number | string;
  readonly protocol: PortProtocol;
  readonly appProtocol?: string;
}

/** How a ServiceEntry's endpoints are found: given (STATIC), resolved by name (DNS, DNS_ROUND_ROBIN), or where the client was going (NONE). */
export type ServiceEntryResolution = 'NONE' | 'STATIC' | 'DNS' | 'DNS_ROUND_ROBIN';

/** What a ServiceEntry adds to a service of one of its hosts; Kubernetes Services have none. */
export interface ServiceEntryAttributes {
  readonly resolution: ServiceEntryResolution;
  /** `location: MESH_EXTERNAL` (the default): outside the mesh, never mesh mutual TLS by itself. */
  readonly meshExternal: boolean;
  /** `spec.addresses` (a /32 or /128 written as the address). */
  readonly addresses: readonly string[];
  readonly subjectAltNames: readonly string[];
  /** `spec.exportTo` as written (empty: the mesh config's `defaultServiceExportTo`). */
  readonly exportTo: readonly string[];
  /** The ServiceEntry's own name; the service's namespace is its namespace. */
  readonly entryName: string;
}

export interface Service {
  /** A Kubernetes Service's name; for a ServiceEntry's host, the host. */
  readonly name: string;
  readonly namespace: string;
  /** `<name>.<namespace>.svc.<domain>`. */
  readonly hostname: string;
  readonly ports: readonly ServicePort[];
  /** Absent when the Service selects no pods (its endpoints are managed elsewhere). */
  readonly selector?: Readonly<Record<string, string>>;
  readonly clusterIp?: string;
  readonly type: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly resourceVersion: string;
  /** Present on the services of ServiceEntries. */
  readonly entry?: ServiceEntryAttributes;
}

export interface ContainerPort {
  readonly name: string;
  readonly containerPort: number;
  readonly protocol: PortProtocol;
}

/** A pod as the mesh sees it. */
export interface Workload {
  readonly name: string;
  readonly namespace: string;
  /** `status.podIP`; empty until one is assigned. */
  readonly address: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly serviceAccount: string;
  /** Injected (`sidecar.mesh.io/status` annotation) or labelled `security.mesh.io/tlsMode: mesh`. */
  readonly hasSidecar: boolean;
  readonly nodeName: string;
  readonly clusterId: string;
  /** Ready condition true, or no conditions reported at all (a pod written by hand). */
  readonly ready: boolean;
  /** Not terminated and not being deleted: it can serve. */
  readonly active: boolean;
  readonly containerPorts: readonly ContainerPort[];
  /** `spec.hostname` and `spec.subdomain`: with a headless Service of the subdomain, `<hostname>.<subdomain>.<ns>.svc.<domain>` names the pod. */
  readonly hostname?: string;
  readonly subdomain?: string;
}

/** One address behind one service port. */
export interface Endpoint {
  readonly address: string;
  /** The target port, resolved for this workload. */
  readonly port: number;
  readonly servicePort: number;
  readonly servicePortName: string;
  readonly ready: boolean;
  /** The pod or WorkloadEntry behind the address, when known. */
  readonly workload?: { readonly namespace: string; readonly name: string };
  /** Set when an EndpointSlice names the endpoint's pod and the registry does not know that pod yet. */
  readonly podPending?: true;
  /** A WorkloadEntry's or ServiceEntry endpoint's `weight`; 1 when absent. */
  readonly weight?: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly serviceAccount: string;
  readonly hasSidecar: boolean;
  readonly clusterId: string;
  readonly nodeName: string;
}

export interface NamespaceInfo {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** An EndpointSlice reduced to what endpoints are built from. */
export interface EndpointSliceInfo {
  readonly name: string;
  readonly namespace: string;
  /** From the `kubernetes.io/service-name` label; empty when it has none. */
  readonly serviceName: string;
  readonly ports: readonly { readonly name: string; readonly port: number; readonly protocol: PortProtocol }[];
  readonly endpoints: readonly {
    readonly addresses: readonly string[];
    readonly ready: boolean;
    readonly podName?: string;
    readonly nodeName: string;
  }[];
}
