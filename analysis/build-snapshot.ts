import type { V1Secret } from '@kubernetes/client-node';
import { DEFAULT_MESH_CONFIG, KIND_NAMES, checkResource, shapeForAnalysis, type KindName, type MeshConfig } from '../crds/index.js';
import { credentialProblem } from './credential-verdict.js';
import type { AnalysisInputs, AnalysisSnapshot, InputName, InvalidMark, MeshObject, Resource, SourcePosition } from './snapshot.js';

/** A Kubernetes object as read from the cluster or a file, with where it came from. */
export interface SourcedObject {
  readonly object: unknown;
  readonly source?: SourcePosition;
}

export interface SnapshotOptions {
  readonly objects: readonly SourcedObject[];
  readonly meshConfig?: MeshConfig;
  /** Inputs the caller read in full (from a cluster); others count as available only when an object of the kind was given. */
  readonly complete?: readonly InputName[];
  readonly domainSuffix?: string;
  readonly rootNamespace?: string;
  /** The time Secrets' certificates are judged at; now unless given. */
  readonly now?: Date;
}

const CORE_KINDS = ['Namespace', 'Service', 'Pod', 'Deployment', 'Secret', 'MutatingWebhookConfiguration', 'ConfigMap'] as const;
type CoreKind = (typeof CORE_KINDS)[number];

/** Every input an analyzer can read: what files alone hold in full, a kind no file holds being none of it. */
export const ALL_INPUTS: readonly InputName[] = [...KIND_NAMES, 'MeshObject', ...CORE_KINDS];

type Buckets = { -readonly [N in Exclude<InputName, 'MeshConfig'>]: Resource<unknown>[] };

/**
 * Sorts objects into the analysis inputs: mesh kinds typed when they have their kind's shape,
 * valid or not (see `typedResource`), and every one kept raw for the schema analyzers; core kinds by kind, Secrets stripped to metadata and type
 * with the verdict on their credential.
 * Objects of other kinds are ignored. A later object with the same kind, namespace and name
 * replaces an earlier one, as an apply over the cluster's state would.
 */
export function buildSnapshot(options: SnapshotOptions): AnalysisSnapshot {
  const buckets = Object.fromEntries([...KIND_NAMES, 'MeshObject', ...CORE_KINDS].map((name) => [name, new Map<string, Resource<unknown>>()])) as unknown as {
    [N in keyof Buckets]: Map<string, Resource<unknown>>;
  };
  const available = new Set<InputName>(options.complete ?? []);
  for (const { object, source } of options.objects) {
    const kind = (object as { kind?: unknown } | null)?.kind;
    if (typeof kind !== 'string') continue;
    const metadata = (object as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
    const name = typeof metadata?.name === 'string' ? metadata.name : '';
    const namespace = typeof metadata?.namespace === 'string' ? metadata.namespace : '';
    const key = `${namespace}/${name}`;
    const resource = (value: unknown, as: string): Resource<unknown> => ({ kind: as, name, namespace, object: value, ...(source ? { source } : {}) });
    if ((KIND_NAMES as readonly string[]).includes(kind)) {
      buckets.MeshObject.set(`${kind}/${key}`, resource(object as MeshObject, kind));
      available.add('MeshObject');
      available.add(kind as KindName);
      const typed = typedResource(object);
      if (typed) buckets[kind as KindName].set(key, { ...resource(typed.object, kind), ...(typed.invalid ? { invalid: typed.invalid } : {}) });
      else buckets[kind as KindName].delete(key);
    } else if ((CORE_KINDS as readonly string[]).includes(kind)) {
      if (kind === 'Secret') {
        const problem = credentialProblem(object as V1Secret, options.now ?? new Date());
        buckets.Secret.set(key, {
          ...resource(withoutKeyMaterial(object as V1Secret), kind),
          ...(problem !== undefined ? { credentialProblem: problem } : {}),
        });
      } else buckets[kind as CoreKind].set(key, resource(object, kind));
      available.add(kind as CoreKind);
    }
  }
  const lists = Object.fromEntries(Object.entries(buckets).map(([name, map]) => [name, [...map.values()]]));
  return {
    inputs: { ...lists, MeshConfig: options.meshConfig ?? DEFAULT_MESH_CONFIG } as unknown as AnalysisInputs,
    available,
    domainSuffix: options.domainSuffix ?? 'cluster.local',
    rootNamespace: options.rootNamespace ?? options.meshConfig?.rootNamespace ?? 'mesh-system',
  };
}

/**
 * A mesh object as the reference's snapshot holds it: whatever its decoder could read, valid or
 * not (`invalid` says not). Undefined when it could read nothing (a spec that is not an object, a
 * word where a number belongs): the reference leaves such an object out of its analysis.
 */
function typedResource(object: unknown): { object: unknown; invalid?: InvalidMark } | undefined {
  const check = checkResource(object);
  if (check.typed) return check.errors.length === 0 ? { object: check.typed } : { object: check.typed, invalid: { omitted: [] } };
  const shaped = shapeForAnalysis(object);
  return shaped ? { object: shaped.resource, invalid: { omitted: shaped.omitted } } : undefined;
}

function withoutKeyMaterial(secret: V1Secret): V1Secret {
  return {
    apiVersion: secret.apiVersion ?? 'v1',
    kind: 'Secret',
    ...(secret.metadata ? { metadata: secret.metadata } : {}),
    ...(secret.type ? { type: secret.type } : {}),
    data: Object.fromEntries(Object.keys({ ...secret.data, ...secret.stringData }).map((key) => [key, ''])),
  };
}
