import type { V1Pod, V1Service, V1ServicePort } from '@kubernetes/client-node';
import type { ServiceEntry, ServicePort } from '../../crds/index.js';
import { clustersOf, configNameOf, configPathOf, listenersOf, routeConfigsOf, type EnvoyConfigDump, type Json } from '../proxyconfig/config-dump.js';
import { policyNamesOf } from './authz-check.js';
import { ANNOTATIONS, PROXY_CONTAINER, labelsMatch } from '../../names/index.js';

/** A mesh resource as the API returns it (DestinationRule, VirtualService, PeerAuthentication, RequestAuthentication). */
export interface MeshResource {
  readonly metadata?: { readonly name?: string; readonly namespace?: string };
  readonly spec?: Json;
}

export interface GatewayView {
  readonly pod: V1Pod;
  readonly dump: EnvoyConfigDump;
  /** Where users reach it: the gateway Service's load-balancer address, else the pod's. */
  readonly address: string;
}

/** Everything `x describe pod` reads, gathered first so that the description is a pure function of it. */
export interface PodFacts {
  readonly pod: V1Pod;
  readonly services: readonly V1Service[];
  /** The pod's proxy config dump; undefined without a sidecar. */
  readonly dump: EnvoyConfigDump | undefined;
  /** By `<name>.<namespace>`, the DestinationRules and VirtualServices the dump names (absent: deleted since). */
  readonly destinationRules: ReadonlyMap<string, MeshResource>;
  readonly virtualServices: ReadonlyMap<string, MeshResource>;
  /** Of the pod's namespace and the root namespace. */
  readonly peerAuthentications: readonly MeshResource[];
  readonly requestAuthentications: readonly MeshResource[];
  readonly rootNamespace: string;
  /** Undefined: no ingress gateway pods. */
  readonly gateways: readonly GatewayView[] | undefined;
  readonly domain: string;
  /** The ServiceEntries of its namespace whose workloadSelector selects it. */
  readonly serviceEntries: readonly ServiceEntry[];
  /** Set when the workload is a VM: `pod` then stands for its WorkloadEntry (labels, ports as container ports). */
  readonly vm?: VmView;
}

export interface VmView {
  readonly proxyId: string;
  readonly address: string;
  /** Its WorkloadEntry: name and named ports; undefined when no entry has its address. */
  readonly entry: { readonly name: string; readonly ports: Readonly<Record<string, number>> } | undefined;
}

/** Whether a policy (PeerAuthentication, RequestAuthentication) applies to the pod: the root namespace's or its own, by selector. */
function applies(resource: MeshResource, pod: V1Pod, rootNamespace: string): boolean {
  const namespace = resource.metadata?.namespace;
  const selector = (resource.spec?.['selector'] as { matchLabels?: Record<string, string> } | undefined)?.matchLabels;
  if (namespace === rootNamespace && !selector) return true;
  return namespace === pod.metadata?.namespace && labelsMatch(selector, pod.metadata?.labels ?? {});
}

function protocolOf(port: V1ServicePort): string {
  const name = (port.appProtocol ?? port.name ?? '').toLowerCase().split('-')[0] ?? '';
  const known: Record<string, string> = {
    http: 'HTTP',
    http2: 'HTTP2',
    grpc: 'GRPC',
    'grpc-web': 'GRPC-Web',
    https: 'HTTPS',
    tls: 'TLS',
    tcp: 'TCP',
    mongo: 'Mongo',
    redis: 'Redis',
    mysql: 'MySQL',
  };
  return known[name] ?? (port.protocol === 'UDP' ? 'UDP' : 'TCP');
}

/** The pod port a service port targets (by number or by the container port's name). */
function targetPortOf(port: V1ServicePort, pod: V1Pod): number | undefined {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  return pod.spec?.containers.flatMap((c) => c.ports ?? []).find((p) => p.name === target)?.containerPort;
}

/** The inbound mTLS mode the proxy enforces on a port (or on the rest), from its `virtualInbound` filter chains. */
function inboundMode(dump: EnvoyConfigDump, port: number | undefined): string | undefined {
  const inbound = listenersOf(dump).find((listener) => listener['name'] === 'virtualInbound');
  if (!inbound) return undefined;
  const chains = ((inbound['filter_chains'] as Json[] | undefined) ?? []).filter((chain) => {
    const match = (chain['filter_chain_match'] as Json | undefined) ?? {};
    const dest = match['destination_port'] as Json | number | undefined;
    const value = typeof dest === 'object' && dest !== null ? dest['value'] : dest;
    return port === undefined ? value === undefined : value === port;
  });
  if (chains.length === 0) return undefined;
  const transports = new Set(chains.map((chain) => String(((chain['filter_chain_match'] as Json | undefined) ?? {})['transport_protocol'] ?? '')));
  if (transports.has('tls') && transports.has('raw_buffer')) return 'PERMISSIVE';
  if (transports.has('tls')) return 'STRICT';
  return 'DISABLE';
}

function subsetsOf(rule: MeshResource): { name: string; labels: Record<string, string> }[] {
  return ((rule.spec?.['subsets'] as { name?: string; labels?: Record<string, string> }[] | undefined) ?? []).map((s) => ({
    name: s.name ?? '',
    labels: s.labels ?? {},
  }));
}

function tlsModeOf(rule: MeshResource, port: number): string | undefined {
  const policy = rule.spec?.['trafficPolicy'] as
    { tls?: { mode?: string }; portLevelSettings?: { port?: { number?: number }; tls?: { mode?: string } }[] } | undefined;
  return policy?.portLevelSettings?.find((setting) => setting.port?.number === port)?.tls?.mode ?? policy?.tls?.mode;
}

/** A host the workload serves: a Service's FQDN, or a ServiceEntry's host; `names` are how a VirtualService destination may name it. */
interface ServedHost {
  readonly fqdn: string;
  readonly names: readonly string[];
}

const serviceHost = (service: V1Service, domain: string): ServedHost => {
  const name = service.metadata?.name ?? '';
  const namespace = service.metadata?.namespace ?? '';
  return { fqdn: `${name}.${namespace}.svc.${domain}`, names: [name, `${name}.${namespace}`] };
};

/** The lines of one port of a host: its DestinationRule and VirtualServices as the workload's proxy sees them. */
function describeHostPort(facts: PodFacts, served: ServedHost, port: { readonly port: number }, prefix: string, lines: string[]): void {
  const dump = facts.dump;
  if (!dump) return;
  const fqdn = served.fqdn;
  const labels = facts.pod.metadata?.labels ?? {};
  const cluster = clustersOf(dump).find((c) => c['name'] === `outbound|${port.port}||${fqdn}`);
  const ruleName = configNameOf(configPathOf(cluster?.['metadata']));
  let matching: string[] = [];
  if (ruleName) {
    const rule = facts.destinationRules.get(ruleName);
    if (!rule) lines.push(`${prefix}WARNING: Proxy is stale; it references a DestinationRule that does not exist: ${ruleName}`);
    else {
      lines.push(`${prefix}DestinationRule: ${rule.metadata?.name ?? ''} for "${String(rule.spec?.['host'] ?? '')}"`);
      const subsets = subsetsOf(rule);
      matching = subsets.filter((s) => labelsMatch(s.labels, labels)).map((s) => s.name);
      const others = subsets.filter((s) => !matching.includes(s.name)).map((s) => s.name);
      if (subsets.length > 0 && matching.length === 0)
        lines.push(`${prefix}  WARNING POD DOES NOT MATCH ANY SUBSETS.  (Non matching subsets ${others.join(',')})`);
      if (matching.length > 0) {
        lines.push(`${prefix}   Matching subsets: ${matching.join(',')}`);
        if (others.length > 0) lines.push(`${prefix}      (Non-matching subsets ${others.join(',')})`);
      }
      const mode = tlsModeOf(rule, port.port);
      lines.push(mode ? `${prefix}   Traffic Policy TLS Mode: ${mode}` : `${prefix}   No Traffic Policy`);
    }
  }
  const route = routeConfigsOf(dump).find((r) => r['name'] === String(port.port));
  const host = ((route?.['virtual_hosts'] as Json[] | undefined) ?? []).find((vh) => ((vh['domains'] as string[] | undefined) ?? []).includes(fqdn));
  const serviceNames = ((host?.['routes'] as Json[] | undefined) ?? [])
    .map((r) => configNameOf(configPathOf(r['metadata'])))
    .filter((n): n is string => n !== undefined);
  for (const name of [...new Set(serviceNames)]) {
    const virtualService = facts.virtualServices.get(name);
    if (!virtualService) {
      lines.push(`${prefix}WARNING: Proxy is stale; it references a VirtualService that does not exist: ${name}`);
      continue;
    }
    lines.push(`${prefix}VirtualService: ${virtualService.metadata?.name ?? ''}`);
    const http = (virtualService.spec?.['http'] as { route?: { destination?: { host?: string; subset?: string } }[] }[] | undefined) ?? [];
    const destinations = http.flatMap((h) => h.route ?? []).map((r) => r.destination ?? {});
    const here = (host: string | undefined): boolean => host !== undefined && (host === fqdn || served.names.includes(host));
    const reaching = destinations.filter((d) => here(d.host) && (d.subset === undefined || matching.includes(d.subset)));
    if (reaching.length === 0) lines.push(`${prefix}   WARNING: No destinations match pod subsets (checked ${http.length} HTTP routes)`);
    else {
      lines.push(`${prefix}   ${http.length} HTTP route(s)`);
      const elsewhere = destinations.length - reaching.length;
      if (elsewhere > 0) lines.push(`${prefix}   ${elsewhere} additional destination(s) that will not reach this pod`);
    }
  }
}

/** Where the ingress gateways expose the service: a gateway route whose cluster is the service's. */
function describeExposure(facts: PodFacts, service: V1Service, lines: string[]): void {
  if (!facts.gateways) {
    lines.push('Skipping Gateway information (no ingress gateway pods)');
    return;
  }
  const fqdn = `${service.metadata?.name ?? ''}.${service.metadata?.namespace ?? ''}.svc.${facts.domain}`;
  for (const gateway of facts.gateways) {
    for (const config of routeConfigsOf(gateway.dump)) {
      const port = /(\d+)$/.exec(String(config['name'] ?? ''))?.[1];
      for (const host of (config['virtual_hosts'] as Json[] | undefined) ?? []) {
        const routes = ((host['routes'] as Json[] | undefined) ?? []).filter((r) => {
          const action = (r['route'] as Json | undefined) ?? {};
          const clusters = [
            String(action['cluster'] ?? ''),
            ...(((action['weighted_clusters'] as Json | undefined)?.['clusters'] as Json[] | undefined) ?? []).map((c) => String(c['name'] ?? '')),
          ];
          return clusters.some((c) => c.endsWith(`|${fqdn}`));
        });
        if (routes.length === 0) continue;
        const domain = ((host['domains'] as string[] | undefined) ?? [])[0] ?? '*';
        const url = `http://${domain === '*' ? gateway.address : domain.replace(/:\d+$/, '')}${port && port !== '80' ? `:${port}` : ''}`;
        lines.push(`Exposed on Ingress Gateway ${url}`);
        const names = [...new Set(routes.map((r) => configNameOf(configPathOf(r['metadata']))).filter((n) => n !== undefined))];
        for (const name of names) lines.push(`VirtualService: ${name?.split('.')[0] ?? ''}`);
      }
    }
  }
}

/** `meshctl x describe pod`: the reference's free text, from gathered facts. */
export function describePod(facts: PodFacts, options: { readonly ignoreUnmeshed: boolean }): string {
  const { pod } = facts;
  const name = pod.metadata?.name ?? '';
  const lines: string[] = [];
  const containers = pod.spec?.containers ?? [];
  const meshed = containers.some((c) => c.name === PROXY_CONTAINER);
  if (!meshed) {
    if (!options.ignoreUnmeshed) lines.push(`WARNING: ${name}.${pod.metadata?.namespace ?? ''} is not part of mesh; no mesh sidecar`);
    return lines.length > 0 ? `${lines.join('\n')}\n` : '';
  }
  if (facts.vm) describeVmHeader(facts.vm, lines);
  else describePodHeader(pod, lines);
  for (const label of ['app', 'version'])
    if (!pod.metadata?.labels?.[label]) lines.push(`Suggestion: add '${label}' label to ${facts.vm ? 'WorkloadEntry' : 'pod'} for mesh telemetry.`);
  for (const service of facts.services) {
    lines.push('--------------------', `Service: ${service.metadata?.name ?? ''}`);
    const servicePorts = service.spec?.ports ?? [];
    for (const port of servicePorts)
      lines.push(`   Port: ${port.name ?? ''} ${port.port}/${protocolOf(port)} targets ${facts.vm ? 'VM' : 'pod'} port ${targetPortOf(port, pod) ?? '?'}`);
    for (const port of servicePorts) describeHostPort(facts, serviceHost(service, facts.domain), port, servicePorts.length > 1 ? `${port.port} ` : '', lines);
  }
  for (const entry of facts.serviceEntries) describeServiceEntry(facts, entry, lines);
  if (facts.dump) {
    lines.push('--------------------', 'Effective PeerAuthentication:');
    const workloadMode = inboundMode(facts.dump, undefined);
    lines.push(`   Workload mTLS mode: ${workloadMode ?? 'PERMISSIVE'}`);
    for (const port of [...new Set(containers.filter((c) => c.name !== PROXY_CONTAINER).flatMap((c) => (c.ports ?? []).map((p) => p.containerPort)))]) {
      const mode = inboundMode(facts.dump, port);
      if (mode && mode !== workloadMode) lines.push(`   Port ${port} mTLS mode: ${mode}`);
    }
    const applied = facts.peerAuthentications
      .filter((p) => applies(p, pod, facts.rootNamespace))
      .map((p) => `${p.metadata?.name ?? ''}.${p.metadata?.namespace ?? ''}`);
    if (applied.length > 0) lines.push('Applied PeerAuthentication:', `   ${applied.join(', ')}`);
    const requestAuth = facts.requestAuthentications
      .filter((r) => applies(r, pod, facts.rootNamespace))
      .map((r) => `${r.metadata?.name ?? ''}.${r.metadata?.namespace ?? ''}`);
    if (requestAuth.length > 0) lines.push('Applied RequestAuthentication:', `   ${requestAuth.join(', ')}`);
    const policies = policyNamesOf(facts.dump);
    if (policies.length > 0) lines.push(`RBAC policies: ${policies.join(', ')}`);
  }
  for (const service of facts.services) describeExposure(facts, service, lines);
  return `${lines.join('\n')}\n`;
}

function describePodHeader(pod: V1Pod, lines: string[]): void {
  const name = pod.metadata?.name ?? '';
  const containers = pod.spec?.containers ?? [];
  lines.push(`Pod: ${name}`);
  const revision = (() => {
    try {
      return (JSON.parse(pod.metadata?.annotations?.[ANNOTATIONS.status] ?? '{}') as { revision?: string }).revision;
    } catch {
      return undefined;
    }
  })();
  lines.push(`   Pod Revision: ${revision || 'default'}`);
  const ports = containers.flatMap((c) =>
    (c.ports ?? []).map((p) => `${p.containerPort}${p.protocol && p.protocol !== 'TCP' ? `/${p.protocol}` : ''} (${c.name})`),
  );
  lines.push(ports.length > 0 ? `   Pod Ports: ${ports.join(', ')}` : '   Pod does not expose ports');
  for (const status of pod.status?.containerStatuses ?? []) if (!status.ready) lines.push(`WARNING: Pod ${name} Container ${status.name} NOT READY`);
  if (containers.some((c) => c.name !== PROXY_CONTAINER && c.securityContext?.runAsUser === 1337))
    lines.push('WARNING: User ID (UID) 1337 is reserved for the sidecar proxy.');
}

function describeVmHeader(vm: VmView, lines: string[]): void {
  lines.push(`VM: ${vm.proxyId}`);
  lines.push(vm.entry ? `   WorkloadEntry: ${vm.entry.name}` : `   WARNING: no WorkloadEntry has the address ${vm.address}`);
  lines.push(`   Address: ${vm.address}`);
  const ports = Object.entries(vm.entry?.ports ?? {}).map(([name, port]) => `${port} (${name})`);
  lines.push(ports.length > 0 ? `   Ports: ${ports.join(', ')}` : '   WorkloadEntry does not name ports');
}

/** A ServiceEntry whose workloadSelector selects the workload: its hosts, its ports as the workload receives them, and the config of each. */
function describeServiceEntry(facts: PodFacts, entry: ServiceEntry, lines: string[]): void {
  lines.push('--------------------', `ServiceEntry: ${entry.metadata.name ?? ''}`, `   Hosts: ${entry.spec.hosts.join(', ')}`);
  const ports = entry.spec.ports ?? [];
  const targetOf = (port: ServicePort): number => facts.vm?.entry?.ports[port.name] ?? port.targetPort ?? port.number;
  for (const port of ports)
    lines.push(`   Port: ${port.name} ${port.number}/${(port.protocol ?? 'TCP').toUpperCase()} targets ${facts.vm ? 'VM' : 'pod'} port ${targetOf(port)}`);
  const several = ports.length > 1 || entry.spec.hosts.length > 1;
  for (const host of entry.spec.hosts)
    for (const port of ports) describeHostPort(facts, { fqdn: host, names: [host] }, { port: port.number }, several ? `${host}:${port.number} ` : '', lines);
}
