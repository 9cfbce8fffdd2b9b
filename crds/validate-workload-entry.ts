import { isDns1123Label } from './dns-names.js';
import { isIpAddress } from './ip-address.js';
import { unixSocketProblem } from './validate-shared.js';
import type { IssueSink, Path } from './validation-issue.js';
import type { WorkloadEntry, WorkloadEntrySpec } from './workload-entry-schema.js';
import type { ReadinessProbe, WorkloadGroup } from './workload-group-schema.js';
import { isFqdn } from './dns-names.js';

export const UNIX_ADDRESS_PREFIX = 'unix://';
const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_NAME_MAX = 63;
const LABEL_PREFIX_MAX = 253;
const PORT_MAX = 65535;

function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const prefixOk = prefix === undefined || (prefix.length <= LABEL_PREFIX_MAX && prefix.split('.').every(isDns1123Label));
  if (!prefixOk || name.length > LABEL_NAME_MAX || !LABEL_NAME.test(name)) {
    return `expected a label key such as app or example.com/tier (an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' or '.'), got "${key}"`;
  }
  return undefined;
}

/** Labels a workload carries, as Kubernetes label syntax allows them. */
export function checkLabels(sink: IssueSink, path: Path, labels: Readonly<Record<string, string>> | undefined): void {
  for (const [key, value] of Object.entries(labels ?? {})) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) sink.error([...path, key], keyProblem);
    if (value.length > LABEL_NAME_MAX || !LABEL_VALUE.test(value)) {
      sink.error(
        [...path, key],
        `expected a label value of at most 63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit, got "${value}"`,
      );
    }
  }
}

export function portProblem(port: number): string | undefined {
  return port >= 1 && port <= PORT_MAX ? undefined : `expected a port number from 1 to 65535, got ${port}`;
}

/** What a ServiceEntry tells the endpoint check: its port names, and whether addresses may be DNS names. */
export type EndpointContext = { servicePorts?: ReadonlySet<string>; allowFqdnAddresses: boolean };

/** The checks of one workload: a WorkloadEntry's spec or a ServiceEntry's endpoint. */
export function checkWorkloadEntry(sink: IssueSink, path: Path, entry: WorkloadEntrySpec, context: EndpointContext): void {
  const address = entry.address ?? '';
  const { servicePorts } = context;
  if (address === '') {
    if ((entry.network ?? '') === '') {
      sink.error(
        [...path, 'address'],
        'required: expected an IP address, a DNS name or a unix:// socket (or a network, for a workload reached through its gateway)',
      );
      return;
    }
    sink.warn([...path, 'address'], `address is unset with network "${entry.network ?? ''}": the workload is reached through that network's gateway`);
  }
  const unix = address.startsWith(UNIX_ADDRESS_PREFIX);
  if (unix) {
    const problem = unixSocketProblem(address.slice(UNIX_ADDRESS_PREFIX.length));
    if (problem !== undefined) sink.error([...path, 'address'], problem);
    if (Object.keys(entry.ports ?? {}).length > 0) sink.error([...path, 'ports'], `a unix:// endpoint has no ports: expected none for "${address}"`);
    if (servicePorts !== undefined && servicePorts.size !== 1) {
      sink.error([...path, 'address'], `a unix:// endpoint serves exactly one service port: expected the ServiceEntry to have 1, got ${servicePorts.size}`);
    }
  } else if (address !== '' && !isIpAddress(address)) {
    if (!context.allowFqdnAddresses) sink.error([...path, 'address'], `expected an IP address (or a unix:// socket) for STATIC resolution, got "${address}"`);
    else if (!isFqdn(address)) sink.error([...path, 'address'], `expected an IP address or a fully qualified DNS name, got "${address}"`);
  }
  checkEndpointPorts(sink, [...path, 'ports'], entry.ports, servicePorts);
  checkLabels(sink, [...path, 'labels'], entry.labels);
}

export function checkEndpointPorts(
  sink: IssueSink,
  path: Path,
  ports: Readonly<Record<string, number>> | undefined,
  servicePorts: ReadonlySet<string> | undefined,
): void {
  for (const [name, port] of Object.entries(ports ?? {})) {
    const at = [...path, name];
    if (servicePorts !== undefined && !servicePorts.has(name))
      sink.error(at, `port "${name}" is not defined by the service entry: expected one of its port names`);
    if (!isDns1123Label(name)) sink.error(at, `expected a port name that is a DNS-1123 label (such as http-api), got "${name}"`);
    const problem = portProblem(port);
    if (problem !== undefined) sink.error(at, problem);
  }
}

export function validateWorkloadEntry(sink: IssueSink, resource: WorkloadEntry): void {
  checkWorkloadEntry(sink, ['spec'], resource.spec, { allowFqdnAddresses: true });
}

function checkProbe(sink: IssueSink, path: Path, probe: ReadinessProbe): void {
  const { httpGet, tcpSocket, exec, grpc } = probe;
  if (httpGet === undefined && tcpSocket === undefined && exec === undefined && grpc === undefined) {
    sink.error(path, 'expected a health check method: one of httpGet, tcpSocket, exec or grpc');
  }
  for (const [method, port] of [
    ['httpGet', httpGet?.port],
    ['tcpSocket', tcpSocket?.port],
    ['grpc', grpc?.port],
  ] as const) {
    const problem = port === undefined ? undefined : portProblem(port);
    if (problem !== undefined) sink.error([...path, method, 'port'], problem);
  }
  if (httpGet?.scheme !== undefined && !['', 'HTTP', 'HTTPS'].includes(httpGet.scheme)) {
    sink.error([...path, 'httpGet', 'scheme'], `expected HTTP or HTTPS, got "${httpGet.scheme}"`);
  }
  if (exec !== undefined && exec.command.length === 0)
    sink.error([...path, 'exec', 'command'], 'required: expected the command to run, such as [cat, /tmp/healthy]');
}

export function validateWorkloadGroup(sink: IssueSink, resource: WorkloadGroup): void {
  const { spec } = resource;
  // The template's address is filled in per workload, so it is not checked as a WorkloadEntry is.
  if (spec.template === undefined)
    sink.error(['spec', 'template'], "required: expected the WorkloadEntry fields the group's workloads share, such as {serviceAccount: vm}");
  checkLabels(sink, ['spec', 'metadata', 'labels'], spec.metadata?.labels);
  if (spec.probe !== undefined) checkProbe(sink, ['spec', 'probe'], spec.probe);
}
