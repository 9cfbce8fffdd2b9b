import type { V1ConfigMap, V1Deployment, V1MutatingWebhookConfiguration, V1Namespace, V1Pod, V1Secret, V1Service } from '@kubernetes/client-node';
import type { KindName, MeshConfig, ResourceOf } from '../crds/index.js';
import type { ResourceKey } from './messages.js';

/** Where a resource was read from, when it came from a file: the line its document starts on. */
export interface SourcePosition {
  readonly file: string;
  readonly line: number;
}

/** One resource of the snapshot: its key, the object, and where it came from. */
export interface Resource<T> extends ResourceKey {
  readonly object: T;
  readonly source?: SourcePosition;
  /**
   * Set on a mesh resource that failed validation. Analyzers see it all the same, as the
   * reference's do; its schema errors are the schema analyzers' messages.
   */
  readonly invalid?: InvalidMark;
}

/** How an invalid resource's `object` differs from what was read. */
export interface InvalidMark {
  /** Fields left out because they lack their type's shape (unknown fields, nulls, enums given by number). */
  readonly omitted: readonly string[];
}

/**
 * A Secret as a snapshot holds it: metadata, type and key names, and in place of its key material
 * the verdict on it as a TLS credential, made when the snapshot was built.
 */
export interface SecretResource extends Resource<V1Secret> {
  /** Why the Secret cannot serve as a gateway's TLS credential; undefined when it can. */
  readonly credentialProblem?: string;
}

/** A document of one of the mesh kinds as read, before validation: what the schema analyzers check. */
export interface MeshObject {
  readonly apiVersion?: unknown;
  readonly kind: KindName;
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly annotations?: Record<string, string> };
  readonly [field: string]: unknown;
}

/**
 * What analyzers read, by input name. The mesh kinds hold every resource that has its kind's
 * shape, valid or not (the invalid ones marked, semantic errors kept, values of the wrong type
 * left out); `MeshObject` holds every document of a mesh kind as read. Secrets carry their
 * metadata, type and credential verdict only: key material never enters a snapshot.
 */
export interface AnalysisInputs {
  readonly PeerAuthentication: readonly Resource<ResourceOf<'PeerAuthentication'>>[];
  readonly RequestAuthentication: readonly Resource<ResourceOf<'RequestAuthentication'>>[];
  readonly AuthorizationPolicy: readonly Resource<ResourceOf<'AuthorizationPolicy'>>[];
  readonly DestinationRule: readonly Resource<ResourceOf<'DestinationRule'>>[];
  readonly Gateway: readonly Resource<ResourceOf<'Gateway'>>[];
  readonly VirtualService: readonly Resource<ResourceOf<'VirtualService'>>[];
  /** Held for analyzers to come; none reads them yet. */
  readonly ServiceEntry: readonly Resource<ResourceOf<'ServiceEntry'>>[];
  readonly WorkloadEntry: readonly Resource<ResourceOf<'WorkloadEntry'>>[];
  readonly WorkloadGroup: readonly Resource<ResourceOf<'WorkloadGroup'>>[];
  readonly MeshObject: readonly Resource<MeshObject>[];
  readonly Namespace: readonly Resource<V1Namespace>[];
  readonly Service: readonly Resource<V1Service>[];
  readonly Pod: readonly Resource<V1Pod>[];
  readonly Deployment: readonly Resource<V1Deployment>[];
  readonly Secret: readonly SecretResource[];
  readonly MutatingWebhookConfiguration: readonly Resource<V1MutatingWebhookConfiguration>[];
  /** ConfigMaps, for the injector's (`mesh-sidecar-injector[-<revision>]` in the root namespace: the proxy image). */
  readonly ConfigMap: readonly Resource<V1ConfigMap>[];
  readonly MeshConfig: MeshConfig;
}

export type InputName = keyof AnalysisInputs;

/**
 * A snapshot of the world to analyse. `available` names the inputs the snapshot really holds:
 * analysing files alone holds no Pods, and an analyzer that needs Pods is skipped rather than
 * told that none exist.
 */
export interface AnalysisSnapshot {
  readonly inputs: AnalysisInputs;
  readonly available: ReadonlySet<InputName>;
  /** The cluster's DNS domain (`cluster.local` unless configured otherwise). */
  readonly domainSuffix: string;
  /** The mesh's root namespace (`mesh-system`). */
  readonly rootNamespace: string;
}
