// Test support for the analyzers: small object builders and a runner that returns the log lines.
import { KIND_NAMES, apiVersionOf, type KindName, type MeshConfig } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';
import { buildSnapshot } from '../build-snapshot.js';
import { formatMessage } from '../messages.js';
import { runAnalyzers } from '../run-analyzers.js';
import type { InputName } from '../snapshot.js';

export interface AnalyzeOptions {
  readonly complete?: readonly InputName[];
  readonly domainSuffix?: string;
  readonly meshConfig?: MeshConfig;
  readonly now?: Date;
  /** The objects include invalid mesh objects on purpose (else an invalid one is taken for a mistake of the test). */
  readonly invalid?: boolean;
}

/** Runs the analyzers over the objects and returns their messages in the log format; fails on an internal error or a skip. */
export function analyze(analyzers: Analyzer | readonly Analyzer[], objects: readonly object[], options: AnalyzeOptions = {}): string[] {
  const list: readonly Analyzer[] = Array.isArray(analyzers) ? analyzers : [analyzers as Analyzer];
  const inputs = list.flatMap((analyzer) => analyzer.inputs);
  const snapshot = buildSnapshot({
    objects: objects.map((object) => ({ object })),
    complete: options.complete ?? inputs,
    ...(options.domainSuffix !== undefined ? { domainSuffix: options.domainSuffix } : {}),
    ...(options.meshConfig !== undefined ? { meshConfig: options.meshConfig } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
  });
  if (!inputs.includes('MeshObject') && options.invalid !== true) {
    const valid = KIND_NAMES.reduce((count, kind) => count + snapshot.inputs[kind].filter((r) => r.invalid === undefined).length, 0);
    if (valid !== snapshot.inputs.MeshObject.length) throw new Error('a mesh object of the test is invalid: pass `invalid: true` if it is meant to be');
  }
  const result = runAnalyzers(snapshot, list);
  if (result.skipped.length > 0) throw new Error(`analyzers ${result.skipped.join(', ')} were skipped`);
  const lines = result.messages.map(formatMessage);
  const internal = lines.find((line) => line.includes('[MSH0001]'));
  if (internal !== undefined) throw new Error(internal);
  return lines;
}

type Labels = Record<string, string>;

export function meshObject(kind: KindName, name: string, namespace: string, spec: object, metadata: object = {}): object {
  return { apiVersion: apiVersionOf(kind), kind, metadata: { name, namespace, ...metadata }, spec };
}

export const virtualService = (name: string, namespace: string, spec: object): object => meshObject('VirtualService', name, namespace, spec);
export const destinationRule = (name: string, namespace: string, spec: object): object => meshObject('DestinationRule', name, namespace, spec);
export const gateway = (name: string, namespace: string, spec: object): object => meshObject('Gateway', name, namespace, spec);
export const peerAuthentication = (name: string, namespace: string, spec: object): object => meshObject('PeerAuthentication', name, namespace, spec);
export const requestAuthentication = (name: string, namespace: string, spec: object): object => meshObject('RequestAuthentication', name, namespace, spec);
export const authorizationPolicy = (name: string, namespace: string, spec: object): object => meshObject('AuthorizationPolicy', name, namespace, spec);

export function namespace(name: string, labels: Labels = {}): object {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

export interface PortSpec {
  readonly port: number;
  readonly name?: string;
  readonly targetPort?: number | string;
  readonly appProtocol?: string;
  readonly protocol?: string;
}

export function service(name: string, ns: string, selector: Labels, ports: readonly PortSpec[], metadata: object = {}): object {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns, ...metadata }, spec: { selector, ports } };
}

export interface PodOptions {
  readonly labels?: Labels;
  readonly annotations?: Record<string, string>;
  readonly containers?: readonly object[];
  readonly serviceAccountName?: string;
  readonly securityContext?: object;
}

/** A pod with one application container `app` (plus the ones given). */
export function pod(name: string, ns: string, options: PodOptions = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: options.labels ?? {}, annotations: options.annotations ?? {} },
    spec: {
      ...(options.serviceAccountName !== undefined ? { serviceAccountName: options.serviceAccountName } : {}),
      ...(options.securityContext !== undefined ? { securityContext: options.securityContext } : {}),
      containers: options.containers ?? [{ name: 'app', image: 'app:1' }],
    },
  };
}

export function deployment(
  name: string,
  ns: string,
  labels: Labels,
  metadata: object = {},
  podSpec: object = { containers: [{ name: 'app', image: 'app:1' }] },
): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, ...metadata },
    spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: podSpec } },
  };
}

export function secret(name: string, ns: string): object {
  return { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name, namespace: ns }, data: { 'tls.crt': '', 'tls.key': '' } };
}
