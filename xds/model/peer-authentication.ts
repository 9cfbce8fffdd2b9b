import type { MtlsMode, PeerAuthentication } from '../../crds/index.js';
import { labelsMatch } from '../../names/index.js';

/** The mutual TLS mode a workload's inbound side enforces (UNSET is resolved away). */
export type EffectiveMtlsMode = 'STRICT' | 'PERMISSIVE' | 'DISABLE';

export interface ComposedPeerAuthentication {
  /** The workload-wide mode. */
  readonly mode: EffectiveMtlsMode;
  /** Container port → mode, for the ports of the workload policy's `portLevelMtls` that a service binds. */
  readonly portModes: ReadonlyMap<number, EffectiveMtlsMode>;
}

export interface ComposePeerAuthenticationInput {
  /** The root namespace: its selector-less policy is mesh-wide. */
  rootNamespace: string;
  /** Any PeerAuthentications; those that do not apply to the workload are ignored. */
  policies: readonly PeerAuthentication[];
  workload: { namespace: string; labels: Readonly<Record<string, string>> };
  /** Whether a service binds this container port; default: every port is bound. */
  boundPorts?: (containerPort: number) => boolean;
}

export const DEFAULT_MTLS_MODE: EffectiveMtlsMode = 'PERMISSIVE';

function hasSelector(policy: PeerAuthentication): boolean {
  return Object.keys(policy.spec.selector?.matchLabels ?? {}).length > 0;
}

/** Milliseconds since the epoch; a policy without a timestamp counts as the oldest. */
function createdAt(policy: PeerAuthentication): number {
  const text = policy.metadata.creationTimestamp;
  const time = text ? Date.parse(text) : NaN;
  return Number.isNaN(time) ? Number.NEGATIVE_INFINITY : time;
}

/** Within a scope the oldest policy wins; equal timestamps fall back to the name. */
function older(a: PeerAuthentication, b: PeerAuthentication): boolean {
  const ta = createdAt(a);
  const tb = createdAt(b);
  if (ta !== tb) return ta < tb;
  return a.metadata.name < b.metadata.name;
}

function explicitMode(mode: MtlsMode | undefined): EffectiveMtlsMode | undefined {
  return mode === undefined || mode === 'UNSET' ? undefined : mode;
}

/**
 * The effective peer authentication of one workload: mesh-wide (root namespace, no selector), then
 * namespace-wide (the workload's namespace, no selector), then workload (selector matching its
 * labels, outside the root namespace, as the reference), then port level from that workload
 * policy. Each level that is UNSET inherits the one above; with nothing set the mode is PERMISSIVE.
 */
export function composePeerAuthentication(input: ComposePeerAuthenticationInput): ComposedPeerAuthentication {
  const { rootNamespace, workload } = input;
  let mesh: PeerAuthentication | undefined;
  let namespace: PeerAuthentication | undefined;
  let workloadPolicy: PeerAuthentication | undefined;
  const pick = (current: PeerAuthentication | undefined, candidate: PeerAuthentication): PeerAuthentication =>
    current === undefined || older(candidate, current) ? candidate : current;

  for (const policy of input.policies) {
    const policyNamespace = policy.metadata.namespace ?? '';
    if (!hasSelector(policy)) {
      if (policyNamespace === rootNamespace) mesh = pick(mesh, policy);
      else if (policyNamespace === workload.namespace) namespace = pick(namespace, policy);
    } else if (
      policyNamespace !== rootNamespace &&
      policyNamespace === workload.namespace &&
      labelsMatch(policy.spec.selector?.matchLabels ?? {}, workload.labels)
    ) {
      workloadPolicy = pick(workloadPolicy, policy);
    }
  }

  let mode: EffectiveMtlsMode = DEFAULT_MTLS_MODE;
  for (const scope of [mesh, namespace, workloadPolicy]) {
    mode = explicitMode(scope?.spec.mtls?.mode) ?? mode;
  }
  const portModes = new Map<number, EffectiveMtlsMode>();
  const bound = input.boundPorts ?? (() => true);
  const ports = Object.entries(workloadPolicy?.spec.portLevelMtls ?? {})
    .map(([port, mtls]) => [Number(port), mtls] as const)
    .filter(([port]) => Number.isInteger(port) && port > 0 && bound(port))
    .sort(([a], [b]) => a - b);
  for (const [port, mtls] of ports) portModes.set(port, explicitMode(mtls.mode) ?? mode);
  return { mode, portModes };
}

/** The mode on one container port: its port-level mode, else the workload-wide one. */
export function mtlsModeForPort(composed: ComposedPeerAuthentication, containerPort: number): EffectiveMtlsMode {
  return composed.portModes.get(containerPort) ?? composed.mode;
}
