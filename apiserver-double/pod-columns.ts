import { isPlainObject, type JsonObject } from './object-util.js';
import type { PrinterColumn } from './resource-type.js';
import { age } from './table-age.js';

/** What `kubectl get pods` shows of a pod, worked out as the server's pod printer does. */
interface PodSummary {
  readonly ready: string;
  readonly status: string;
  readonly restarts: string;
}

const list = (value: unknown): JsonObject[] => (Array.isArray(value) ? value.filter(isPlainObject) : []);
const object = (value: unknown): JsonObject | undefined => (isPlainObject(value) ? value : undefined);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const count = (value: unknown): number => (typeof value === 'number' ? value : 0);

function summarize(pod: JsonObject, nowMs: number): PodSummary {
  const spec = object(pod['spec']) ?? {};
  const status = object(pod['status']) ?? {};
  const metadata = object(pod['metadata']) ?? {};
  const initSpecs = new Map(list(spec['initContainers']).map((container) => [text(container['name']), container]));
  const isSidecar = (name: string): boolean => initSpecs.get(name)?.['restartPolicy'] === 'Always';
  const initStatuses = list(status['initContainerStatuses']);
  const initSpecCount = list(spec['initContainers']).length;

  const total = list(spec['containers']).length + [...initSpecs.keys()].filter(isSidecar).length;
  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart = 0;
  let lastSidecarRestart = 0;
  let reason = text(status['reason']) || text(status['phase']);
  const finishedAt = (container: JsonObject): number => {
    const finished = text(object(object(container['lastState'])?.['terminated'])?.['finishedAt']);
    return finished ? Date.parse(finished) : 0;
  };

  let initializing = false;
  for (const [index, container] of initStatuses.entries()) {
    restarts += count(container['restartCount']);
    lastRestart = Math.max(lastRestart, finishedAt(container));
    const state = object(container['state']) ?? {};
    if (isSidecar(text(container['name']))) {
      sidecarRestarts += count(container['restartCount']);
      lastSidecarRestart = Math.max(lastSidecarRestart, finishedAt(container));
      if (container['started'] === true && container['ready'] === true) ready++;
      continue;
    }
    const terminated = object(state['terminated']);
    const waiting = object(state['waiting']);
    if (terminated && count(terminated['exitCode']) === 0) continue;
    initializing = true;
    if (terminated) reason = `Init:${terminationReason(terminated)}`;
    else if (waiting && text(waiting['reason']) !== '' && text(waiting['reason']) !== 'PodInitializing') reason = `Init:${text(waiting['reason'])}`;
    else reason = `Init:${index}/${initSpecCount}`;
    break;
  }

  const conditions = list(status['conditions']);
  const conditionTrue = (type: string): boolean => conditions.some((condition) => condition['type'] === type && condition['status'] === 'True');
  if (!initializing || conditionTrue('Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let running = false;
    for (const container of list(status['containerStatuses']).reverse()) {
      restarts += count(container['restartCount']);
      lastRestart = Math.max(lastRestart, finishedAt(container));
      const state = object(container['state']) ?? {};
      const waiting = text(object(state['waiting'])?.['reason']);
      const terminated = object(state['terminated']);
      if (waiting !== '') reason = waiting;
      else if (terminated) reason = terminationReason(terminated);
      else if (container['ready'] === true && object(state['running'])) {
        running = true;
        ready++;
      }
    }
    if (reason === 'Completed' && running) reason = conditions.some((condition) => condition['type'] === 'Ready') ? 'Running' : 'NotReady';
  }
  if (metadata['deletionTimestamp'] !== undefined) reason = text(status['reason']) === 'NodeLost' ? 'Unknown' : 'Terminating';
  const restartText = restarts !== 0 && lastRestart > 0 ? `${restarts} (${age(new Date(lastRestart).toISOString(), nowMs)} ago)` : String(restarts);
  return { ready: `${ready}/${total}`, status: reason, restarts: restartText };
}

function terminationReason(terminated: JsonObject): string {
  const reason = text(terminated['reason']);
  if (reason !== '') return reason;
  return count(terminated['signal']) !== 0 ? `Signal:${count(terminated['signal'])}` : `ExitCode:${count(terminated['exitCode'])}`;
}

/** The printer writes `<none>` where a value is missing. */
const orNone = (value: unknown): string => (typeof value === 'string' && value !== '' ? value : '<none>');

function readinessGates(pod: JsonObject): string {
  const gates = list(object(pod['spec'])?.['readinessGates']);
  if (gates.length === 0) return '<none>';
  const conditions = list(object(pod['status'])?.['conditions']);
  const met = gates.filter((gate) => conditions.some((condition) => condition['type'] === gate['conditionType'] && condition['status'] === 'True')).length;
  return `${met}/${gates.length}`;
}

const string = (name: string, description: string, priority: number, compute: PrinterColumn['compute']): PrinterColumn => ({
  name,
  type: 'string',
  description,
  priority,
  jsonPath: '',
  compute,
});

/** The columns a real server returns for pods: NAME, READY, STATUS, RESTARTS, AGE, and with `-o wide` IP, NODE, NOMINATED NODE, READINESS GATES. */
export const POD_COLUMNS: readonly PrinterColumn[] = [
  string('Ready', 'The aggregate readiness state of this pod for accepting traffic.', 0, (pod, nowMs) => summarize(pod, nowMs).ready),
  string('Status', 'The aggregate status of the containers in this pod.', 0, (pod, nowMs) => summarize(pod, nowMs).status),
  string(
    'Restarts',
    'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    0,
    (pod, nowMs) => summarize(pod, nowMs).restarts,
  ),
  {
    name: 'Age',
    type: 'date',
    description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
    priority: 0,
    jsonPath: '.metadata.creationTimestamp',
  },
  string('IP', 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', 1, (pod) =>
    orNone(list(object(pod['status'])?.['podIPs'])[0]?.['ip'] ?? object(pod['status'])?.['podIP']),
  ),
  string('Node', 'NodeName is a request to schedule this pod onto a specific node.', 1, (pod) => orNone(object(pod['spec'])?.['nodeName'])),
  string('Nominated Node', 'nominatedNodeName is set when this pod preempts other pods on the node.', 1, (pod) =>
    orNone(object(pod['status'])?.['nominatedNodeName']),
  ),
  string('Readiness Gates', 'If specified, all readiness gates will be evaluated for pod readiness.', 1, readinessGates),
];
