import { hostNameProblem, isFqdn } from './dns-names.js';
import { isCidr, isIpAddress } from './ip-address.js';
import { listWords } from './common-schemas.js';
import type { ServiceEntry, ServiceEntrySpec } from './service-entry-schema.js';
import { checkExportTo, checkSelectorLabels } from './validate-shared.js';
import { checkEndpointPorts, checkLabels, checkWorkloadEntry } from './validate-workload-entry.js';
import type { IssueSink } from './validation-issue.js';

/** The protocols a service port may name (case-insensitive); unset means the proxy sniffs it. */
export const SERVICE_PROTOCOLS = ['HTTP', 'HTTPS', 'HTTP2', 'HTTP_PROXY', 'GRPC', 'GRPC-WEB', 'TCP', 'TLS', 'UDP', 'MONGO', 'REDIS', 'MYSQL'] as const;
const HTTP_PROTOCOLS: ReadonlySet<string> = new Set(['HTTP', 'HTTP2', 'HTTP_PROXY', 'GRPC', 'GRPC-WEB']);
const TLS_PROTOCOLS: ReadonlySet<string> = new Set(['HTTPS', 'TLS']);
const TCP_PROTOCOLS: ReadonlySet<string> = new Set(['TCP', 'HTTPS', 'TLS', 'MONGO', 'REDIS', 'MYSQL']);

const upper = (protocol: string | undefined): string => (protocol ?? '').toUpperCase();

function checkHosts(sink: IssueSink, spec: ServiceEntrySpec): void {
  if (spec.hosts.length === 0) sink.error(['spec', 'hosts'], 'expected at least one host');
  spec.hosts.forEach((host, i) => {
    const at = ['spec', 'hosts', i];
    if (host === '*') {
      sink.error(at, 'a ServiceEntry cannot cover every host: expected a host name such as api.example.com or *.example.com, got "*"');
      return;
    }
    const problem = hostNameProblem(host);
    if (problem !== undefined) sink.error(at, problem);
    else if (host.includes('*') && !host.startsWith('*.'))
      sink.warn(at, `partial wildcard "${host}" is not supported: expected a whole first label "*." or none`);
  });
}

function checkAddresses(sink: IssueSink, spec: ServiceEntrySpec, resolution: string): void {
  let cidr = false;
  (spec.addresses ?? []).forEach((address, i) => {
    cidr ||= address.includes('/');
    if (!(address.includes('/') ? isCidr(address) : isIpAddress(address))) {
      sink.error(['spec', 'addresses', i], `expected an IP address or a CIDR range such as 192.0.2.10 or 10.0.0.0/16, got "${address}"`);
    }
  });
  if (cidr && resolution !== 'NONE' && resolution !== 'STATIC') {
    sink.error(['spec', 'addresses'], `CIDR addresses need resolution NONE or STATIC, got ${resolution}`);
  }
}

/** Port names and numbers are unique; returns the set of names, which endpoints refer to. */
function checkPorts(sink: IssueSink, spec: ServiceEntrySpec): Set<string> {
  const names = new Map<string, number>();
  const numbers = new Map<number, number>();
  (spec.ports ?? []).forEach((port, i) => {
    const at = ['spec', 'ports', i];
    const sameName = names.get(port.name);
    if (sameName !== undefined) sink.error([...at, 'name'], `duplicate port name "${port.name}" (also ports[${sameName}]): expected unique port names`);
    else names.set(port.name, i);
    const sameNumber = numbers.get(port.number);
    if (sameNumber !== undefined) sink.error([...at, 'number'], `duplicate port ${port.number} (also ports[${sameNumber}]): expected unique port numbers`);
    else numbers.set(port.number, i);
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(port.name) || port.name.length > 63) {
      sink.error([...at, 'name'], `expected a port name that is a DNS-1123 label (such as http-api), got "${port.name}"`);
    }
    const protocol = upper(port.protocol);
    if (protocol !== '' && !(SERVICE_PROTOCOLS as readonly string[]).includes(protocol)) {
      sink.error([...at, 'protocol'], `unknown protocol "${port.protocol ?? ''}": expected one of ${listWords(SERVICE_PROTOCOLS)}`);
    }
    if ((spec.addresses ?? []).length === 0 && (protocol === '' || protocol === 'TCP')) {
      sink.warn(at, 'a TCP (or unset) protocol port is told apart only by its address: expected addresses, as IPs are not allocated automatically');
    }
  });
  return new Set(names.keys());
}

function checkDnsResolution(sink: IssueSink, spec: ServiceEntrySpec, resolution: string, servicePorts: ReadonlySet<string>): void {
  const endpoints = spec.endpoints ?? [];
  if (endpoints.length === 0) {
    const i = spec.hosts.findIndex((host) => !isFqdn(host));
    if (i >= 0) {
      sink.error(
        ['spec', 'hosts', i],
        `resolution ${resolution} without endpoints resolves the hosts themselves: expected fully qualified names without wildcards, got "${spec.hosts[i] ?? ''}"`,
      );
    }
  }
  if (resolution === 'DNS_ROUND_ROBIN' && endpoints.length > 1) {
    sink.error(['spec', 'endpoints'], `resolution DNS_ROUND_ROBIN takes at most 1 endpoint, got ${endpoints.length}`);
  }
  endpoints.forEach((endpoint, i) => {
    const at = ['spec', 'endpoints', i];
    const address = endpoint.address ?? '';
    if (!isIpAddress(address) && !isFqdn(address)) {
      sink.error([...at, 'address'], `expected an IP address or a fully qualified DNS name for resolution ${resolution}, got "${address}"`);
    }
    checkLabels(sink, [...at, 'labels'], endpoint.labels);
    checkEndpointPorts(sink, [...at, 'ports'], endpoint.ports, servicePorts);
  });
  if ((spec.addresses ?? []).length > 0 && spec.hosts.length > 1 && (spec.ports ?? []).some((port) => TCP_PROTOCOLS.has(upper(port.protocol)))) {
    sink.warn(['spec', 'hosts'], 'hosts cannot be told apart on a TCP port of a service with addresses: expected a single host');
  }
}

export function validateServiceEntry(sink: IssueSink, resource: ServiceEntry): void {
  const { spec } = resource;
  const resolution = spec.resolution ?? 'NONE';
  if (spec.workloadSelector !== undefined) {
    const labels = spec.workloadSelector.labels ?? {};
    checkSelectorLabels(sink, ['spec', 'workloadSelector', 'labels'], labels);
    if (Object.keys(labels).length === 0)
      sink.warn(['spec', 'workloadSelector'], 'selector without labels selects every workload in the namespace; add labels or remove the selector');
  }
  if (spec.workloadSelector !== undefined && spec.endpoints !== undefined) {
    sink.error(['spec'], 'only one of workloadSelector or endpoints may be set');
  }
  checkHosts(sink, spec);
  checkAddresses(sink, spec, resolution);
  const servicePorts = checkPorts(sink, spec);

  switch (resolution) {
    case 'NONE':
      if ((spec.endpoints ?? []).length > 0)
        sink.error(['spec', 'endpoints'], 'resolution NONE forwards to the address the client asked for: expected no endpoints');
      if (spec.workloadSelector !== undefined) sink.warn(['spec', 'workloadSelector'], 'has no effect with resolution NONE');
      break;
    case 'STATIC':
      (spec.endpoints ?? []).forEach((endpoint, i) =>
        checkWorkloadEntry(sink, ['spec', 'endpoints', i], endpoint, { servicePorts, allowFqdnAddresses: false }),
      );
      break;
    case 'DNS':
    case 'DNS_ROUND_ROBIN':
      checkDnsResolution(sink, spec, resolution, servicePorts);
      break;
  }

  // Plain TCP carries no host name, so several hosts on one port are told apart only with HTTP or TLS (SNI).
  if (resolution !== 'NONE' && spec.hosts.length > 1) {
    const i = (spec.ports ?? []).findIndex((port) => !HTTP_PROTOCOLS.has(upper(port.protocol)) && !TLS_PROTOCOLS.has(upper(port.protocol)));
    if (i >= 0)
      sink.error(
        ['spec', 'ports', i, 'protocol'],
        'several hosts share this port, and only HTTP or TLS tells them apart: expected an HTTP or TLS protocol, or a single host',
      );
  }
  checkExportTo(sink, ['spec', 'exportTo'], spec.exportTo, resource.metadata.namespace, false, true);
}
