import { stringify } from 'yaml';
import { apiVersionOf } from '../../crds/index.js';
import { UsageError } from '../../runtime/index.js';
import { keyValueMap } from '../key-value-items.js';

/** What `x workload group create` is given. */
export interface WorkloadGroupInput {
  readonly name: string;
  readonly namespace: string;
  /** `key=value` items (see `keyValueMap`). */
  readonly labels: readonly string[];
  readonly annotations: readonly string[];
  /** `name=port` items. */
  readonly ports: readonly string[];
  readonly serviceAccount: string;
}

/**
 * The WorkloadGroup `x workload group create` prints, as the reference prints it: the group's
 * name and namespace, `spec.metadata` with the labels and annotations its entries get, and
 * `spec.template` with the ports and service account of its workloads; keys sorted, empty maps
 * written `{}`. A port that is no number names the flag (the reference drops it with a log line).
 */
export function workloadGroupYaml(input: WorkloadGroupInput): string {
  if (input.name === '') throw new UsageError('expecting a workload name');
  if (input.namespace === '') throw new UsageError('expecting a workload namespace');
  const group = {
    apiVersion: apiVersionOf('WorkloadGroup'),
    kind: 'WorkloadGroup',
    metadata: { name: input.name, namespace: input.namespace },
    spec: {
      metadata: { annotations: keyValueMap(input.annotations), labels: keyValueMap(input.labels) },
      template: { ports: portMap(input.ports), serviceAccount: input.serviceAccount },
    },
  };
  return stringify(group);
}

const MAX_UINT32 = 4_294_967_295;

function portMap(items: readonly string[]): Record<string, number> {
  const ports = Object.entries(keyValueMap(items)).map(([name, value]): [string, number] => {
    const port = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!(port <= MAX_UINT32)) throw new UsageError(`invalid --ports item "${name}=${value}": expected <name>=<port number>`);
    return [name, port];
  });
  return Object.fromEntries(ports);
}
