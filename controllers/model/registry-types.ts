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

export interface Service {
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
}

/** One address behind one service port. */
export interface Endpoint {
  readonly address: string;
  /** The target port, resolved for this workload. */
  readonly port: number;
  readonly servicePort: number;
  readonly servicePortName: string;
  readonly ready: boolean;
  /** The pod behind the address, when known. */
  readonly workload?: { readonly namespace: string; readonly name: string };
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
