import { createHash } from 'node:crypto';
import type { AuthorizationPolicy, DestinationRule, Gateway, PeerAuthentication, RequestAuthentication, VirtualService } from '../../crds/index.js';
import { selectsWorkload, type Credential, type Endpoint, type MeshModel, type Service, type Workload } from '../../controllers/index.js';
import { KIND_NAMES, UNTRANSLATED_KINDS, type InboundTrafficMode, type MeshConfig } from '../../crds/index.js';
import { newPolicyIndex, type PolicyIndex } from './policy-index.js';
import { buildServiceEntryServices, compareEndpoints, workloadOfEntry, type ServicePortRef } from './service-entries.js';

/** A DestinationRule as the push context holds it: the resolved host and where it came from. */
export interface IndexedDestinationRule {
  readonly namespace: string;
  readonly name: string;
  /** The FQDN (or wildcard) the rule's `spec.host` names, short names resolved in the rule's namespace. */
  readonly host: string;
  readonly rule: DestinationRule;
}

/** A VirtualService as the push context holds it: hosts resolved to FQDNs (or wildcards) in its namespace. */
export interface IndexedVirtualService {
  readonly namespace: string;
  readonly name: string;
  readonly hosts: readonly string[];
  readonly virtualService: VirtualService;
}

/** The VirtualServices that route sidecar traffic (bound to `mesh`), by the hosts they name. */
export interface MeshVirtualServiceIndex {
  /** By exact host; within a host sorted by namespace, then name. */
  readonly byHost: ReadonlyMap<string, readonly IndexedVirtualService[]>;
  /** Those naming a wildcard host (`*`, `*.ns.svc.cluster.local`), sorted by namespace, then name. */
  readonly wildcards: readonly IndexedVirtualService[];
}

/** A Gateway as the push context holds it. */
export interface IndexedGateway {
  readonly namespace: string;
  readonly name: string;
  readonly gateway: Gateway;
}

/**
 * One immutable snapshot of the model for one push. Generators read it and never the model, so
 * every proxy of a push sees the same world.
 */
export interface PushContext {
  /** Changes whenever policies, the registry or the mesh config change. */
  readonly version: string;
  /** `<Kind>/<namespace>/<name>` → the `metadata.generation` (else resource version) of every policy: what a push carries, for distribution tracking. */
  readonly configGenerations: ReadonlyMap<string, string>;
  readonly domain: string;
  readonly rootNamespace: string;
  /** Mesh `connectTimeout`, as a duration string (`10s`). */
  readonly connectTimeout: string;
  readonly inboundTrafficMode: InboundTrafficMode;
  /** Sorted by hostname. */
  readonly services: readonly Service[];
  readonly serviceByHost: ReadonlyMap<string, Service>;
  /** `services` by namespace, in the same order: what can select a workload of that namespace. */
  readonly servicesByNamespace: ReadonlyMap<string, readonly Service[]>;
  /** By `servicePortKey(hostname, port)`; ready and not-ready endpoints, sorted by address. */
  readonly endpointsByServicePort: ReadonlyMap<string, readonly Endpoint[]>;
  /** By resolved host; within a host sorted by namespace, then name. */
  readonly destinationRulesByHost: ReadonlyMap<string, readonly IndexedDestinationRule[]>;
  /** The rules of wildcard hosts, the most specific (longest) host first. */
  readonly wildcardDestinationRules: readonly IndexedDestinationRule[];
  /** Ports a ServiceEntry declares again for a host another Service already has there: their clusters are made once. */
  readonly duplicateServicePorts: readonly ServicePortRef[];
  /** By `<namespace>/<name>`. */
  readonly workloads: ReadonlyMap<string, Workload>;
  /** By service hostname: the sorted service accounts of the workloads it selects (the SANs clients check). */
  readonly serviceAccountsByHost: ReadonlyMap<string, readonly string[]>;
  readonly workloadsByAddress: ReadonlyMap<string, readonly Workload[]>;
  /** Sorted by namespace, then name. */
  readonly virtualServices: readonly IndexedVirtualService[];
  readonly meshVirtualServices: MeshVirtualServiceIndex;
  /** Sorted by namespace, then name. */
  readonly gateways: readonly IndexedGateway[];
  /** The whole mesh config of this push (trust domain, aliases, path normalization, providers). */
  readonly meshConfig: MeshConfig;
  /** Security policies, indexed for selection by namespace and labels. */
  readonly peerAuthentications: PolicyIndex<PeerAuthentication>;
  readonly requestAuthentications: PolicyIndex<RequestAuthentication>;
  readonly authorizationPolicies: PolicyIndex<AuthorizationPolicy>;
  /** TLS credentials from Secrets, by `<namespace>/<name>`: only the Secret generator reads them. */
  readonly credentials: ReadonlyMap<string, Credential>;
}

export function servicePortKey(hostname: string, port: number): string {
  return `${hostname}:${port}`;
}

/** A DestinationRule host resolved as the reference does: a name without dots is short for `<name>.<ns>.svc.<domain>`. */
export function resolveRuleHost(host: string, namespace: string, domain: string): string {
  return host.includes('.') || host === '*' ? host : `${host}.${namespace}.svc.${domain}`;
}

/** What a push context holds of the registry: rebuilt for every push. */
type RegistryPart = Pick<
  PushContext,
  | 'services'
  | 'serviceByHost'
  | 'servicesByNamespace'
  | 'endpointsByServicePort'
  | 'duplicateServicePorts'
  | 'workloads'
  | 'serviceAccountsByHost'
  | 'workloadsByAddress'
>;

/** What a push context holds of the config, the mesh config and the credentials: kept by an endpoint-only push. */
interface ConfigPart extends Omit<PushContext, keyof RegistryPart | 'version'> {
  /** The config store's version, the credentials' and the mesh config's digest: the version without the registry's. */
  readonly configVersion: readonly [string, string, string];
}

/** Builds the frozen push context from the model's current state. Pure: reads the model, writes nothing. */
export function buildPushContext(model: MeshModel): PushContext {
  return assemble(model, buildConfigPart(model));
}

/** Builds each push's context, keeping the config part of the last one for the endpoint-only push that follows it. */
export interface PushContextBuilder {
  /**
   * The context of a push. After an endpoint-only push (`full: false`: only endpoints and pods
   * moved) of the context this builder built last, that context's config part (policies,
   * routing, the mesh config, credentials: any change to them comes with a full push) is kept and
   * only the registry part is built again.
   */
  build(previous: PushContext | undefined, request: { readonly full: boolean }): PushContext;
}

export function newPushContextBuilder(model: MeshModel): PushContextBuilder {
  let last: { context: PushContext; config: ConfigPart } | undefined;
  return {
    build(previous, request) {
      const config = !request.full && last && previous === last.context ? last.config : buildConfigPart(model);
      const context = assemble(model, config);
      last = { context, config };
      return context;
    },
  };
}

function assemble(model: MeshModel, config: ConfigPart): PushContext {
  const { configVersion, ...configPart } = config;
  const [configStore, credentials, meshDigest] = configVersion;
  return Object.freeze({
    version: `${configStore}.${model.registry.version()}.${credentials}.${meshDigest}`,
    ...configPart,
    ...buildRegistryPart(model),
  });
}

function buildRegistryPart(model: MeshModel): RegistryPart {
  const kubernetesServices = model.registry.services();
  const entries = buildServiceEntryServices(model, kubernetesServices, model.registry.workloads());
  const services = [...kubernetesServices, ...entries.services].sort((a, b) => compare(a.hostname, b.hostname));
  const serviceByHost = new Map<string, Service>();
  const servicesByNamespace = new Map<string, Service[]>();
  const endpointsByServicePort = new Map<string, readonly Endpoint[]>();
  for (const service of services) {
    serviceByHost.set(service.hostname, service);
    const inNamespace = servicesByNamespace.get(service.namespace);
    if (inNamespace) inNamespace.push(service);
    else servicesByNamespace.set(service.namespace, [service]);
    for (const port of service.ports) {
      const key = servicePortKey(service.hostname, port.port);
      const own = service.entry ? [] : model.registry.endpoints(service.namespace, service.name, port.port);
      const added = entries.endpoints.get(key) ?? [];
      endpointsByServicePort.set(key, freezeAll(added.length === 0 ? own : [...own, ...added].sort(compareEndpoints)));
    }
  }

  const workloads = new Map<string, Workload>();
  const workloadsByAddress = new Map<string, Workload[]>();
  for (const workload of model.registry.workloads()) {
    workloads.set(`${workload.namespace}/${workload.name}`, workload);
    if (workload.address === '') continue;
    let list = workloadsByAddress.get(workload.address);
    if (!list) workloadsByAddress.set(workload.address, (list = []));
    list.push(workload);
  }
  // A VM's proxy finds its workload by address too: the WorkloadEntries, after the pods of an address.
  for (const entry of model.configStore.list('WorkloadEntry')) {
    const workload = workloadOfEntry(entry, model.clusterId);
    if (!workload) continue;
    let list = workloadsByAddress.get(workload.address);
    if (!list) workloadsByAddress.set(workload.address, (list = []));
    list.push(workload);
  }
  for (const list of workloadsByAddress.values()) Object.freeze(list);

  const workloadsByNamespace = new Map<string, Workload[]>();
  for (const workload of workloads.values()) {
    let list = workloadsByNamespace.get(workload.namespace);
    if (!list) workloadsByNamespace.set(workload.namespace, (list = []));
    list.push(workload);
  }
  const serviceAccountsByHost = new Map<string, readonly string[]>();
  for (const service of services) {
    const accounts = new Set<string>(entries.serviceAccounts.get(service.hostname));
    for (const workload of workloadsByNamespace.get(service.namespace) ?? []) {
      if (workload.serviceAccount !== '' && selectsWorkload(service, workload)) accounts.add(workload.serviceAccount);
    }
    serviceAccountsByHost.set(service.hostname, Object.freeze([...accounts].sort()));
  }

  return {
    services: Object.freeze(services),
    serviceByHost,
    servicesByNamespace,
    endpointsByServicePort,
    duplicateServicePorts: Object.freeze([...entries.duplicateServicePorts]),
    workloads,
    serviceAccountsByHost,
    workloadsByAddress,
  };
}

function buildConfigPart(model: MeshModel): ConfigPart {
  const meshConfig = model.meshConfig();
  const destinationRulesByHost = new Map<string, IndexedDestinationRule[]>();
  for (const entry of model.configStore.list('DestinationRule')) {
    const rule = entry.resource;
    const host = resolveRuleHost(rule.spec.host, entry.namespace, model.domain);
    let list = destinationRulesByHost.get(host);
    if (!list) destinationRulesByHost.set(host, (list = []));
    list.push(Object.freeze({ namespace: entry.namespace, name: entry.name, host, rule }));
  }
  for (const list of destinationRulesByHost.values()) Object.freeze(list);
  const wildcardDestinationRules = [...destinationRulesByHost]
    .filter(([host]) => isWildcardHost(host))
    .flatMap(([, entries]) => entries)
    .sort((a, b) => b.host.length - a.host.length);

  const byKey = (a: { namespace: string; name: string }, b: { namespace: string; name: string }): number =>
    compare(a.namespace, b.namespace) || compare(a.name, b.name);
  const virtualServices = model.configStore
    .list('VirtualService')
    .map((entry) =>
      Object.freeze({
        namespace: entry.namespace,
        name: entry.name,
        hosts: Object.freeze((entry.resource.spec.hosts ?? []).map((host) => resolveRuleHost(host, entry.namespace, model.domain))),
        virtualService: entry.resource,
      }),
    )
    .sort(byKey);
  const gateways = model.configStore
    .list('Gateway')
    .map((entry) => Object.freeze({ namespace: entry.namespace, name: entry.name, gateway: entry.resource }))
    .sort(byKey);

  const policiesOf = <K extends 'PeerAuthentication' | 'RequestAuthentication' | 'AuthorizationPolicy'>(kind: K) =>
    newPolicyIndex(Object.freeze([...model.configStore.list(kind)].sort(byKey).map((entry) => entry.resource)), meshConfig.rootNamespace);

  const meshDigest = createHash('sha256').update(JSON.stringify(meshConfig)).digest('hex').slice(0, 8);
  return {
    configVersion: [String(model.configStore.version()), String(model.credentials.version()), meshDigest],
    configGenerations: configGenerationsOf(model),
    domain: model.domain,
    rootNamespace: meshConfig.rootNamespace,
    connectTimeout: meshConfig.connectTimeout,
    inboundTrafficMode: meshConfig.inboundTrafficPolicy.mode,
    destinationRulesByHost,
    wildcardDestinationRules: Object.freeze(wildcardDestinationRules),
    virtualServices: Object.freeze(virtualServices),
    meshVirtualServices: indexMeshVirtualServices(virtualServices),
    gateways: Object.freeze(gateways),
    meshConfig,
    peerAuthentications: policiesOf('PeerAuthentication'),
    requestAuthentications: policiesOf('RequestAuthentication'),
    authorizationPolicies: policiesOf('AuthorizationPolicy'),
    credentials: model.credentials.snapshot(),
  };
}

function isWildcardHost(host: string): boolean {
  return host === '*' || host.startsWith('*.');
}

/** Whether a VirtualService applies to sidecars: no `gateways`, or `mesh` among them. */
export function isBoundToMesh(entry: IndexedVirtualService): boolean {
  const gateways = entry.virtualService.spec.gateways;
  return gateways === undefined || gateways.length === 0 || gateways.includes('mesh');
}

function indexMeshVirtualServices(virtualServices: readonly IndexedVirtualService[]): MeshVirtualServiceIndex {
  const byHost = new Map<string, IndexedVirtualService[]>();
  const wildcards: IndexedVirtualService[] = [];
  for (const entry of virtualServices) {
    if (!isBoundToMesh(entry)) continue;
    if (entry.hosts.some(isWildcardHost)) wildcards.push(entry);
    for (const host of new Set(entry.hosts)) {
      if (isWildcardHost(host)) continue;
      let list = byHost.get(host);
      if (!list) byHost.set(host, (list = []));
      list.push(entry);
    }
  }
  for (const list of byHost.values()) Object.freeze(list);
  return Object.freeze({ byHost, wildcards: Object.freeze(wildcards) });
}

function freezeAll<T>(list: readonly T[]): readonly T[] {
  return Object.freeze([...list]);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Every policy's generation (its resource version without one): what distribution tracking compares. Kinds not translated yet reach no proxy, so they are left out. */
function configGenerationsOf(model: MeshModel): ReadonlyMap<string, string> {
  const generations = new Map<string, string>();
  for (const kind of KIND_NAMES) {
    if (UNTRANSLATED_KINDS.has(kind)) continue;
    for (const entry of model.configStore.list(kind)) generations.set(`${kind}/${entry.namespace}/${entry.name}`, entry.generation || entry.resourceVersion);
  }
  return generations;
}
