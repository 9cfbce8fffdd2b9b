import { KIND_NAMES, apiVersionOf, checkResource, type ResourceCheck } from '../../crds/index.js';
import type { KubeObject } from '../../runtime/index.js';
import { parseConfigFile, type ParsedConfigFile, type ParsedDocument } from './config-file-parser.js';
import { normalizeConfigObject } from './config-object-resolver.js';
import { groupKindOf } from './group-kind.js';
import { withFields } from './with-fields.js';

/** A parsed document with, for the mesh kinds, the part of its validation that needs no cluster. */
export interface CheckedDocument extends ParsedDocument {
  /** The object as it will be served, checked (`checkResource`); absent for the other kinds. */
  check?: ResourceCheck;
}

export interface CheckedConfigFile extends ParsedConfigFile {
  documents: CheckedDocument[];
}

/** The group-kinds whose reconcilers validate what the folder serves (any version of the group). */
const MESH_GROUP_KINDS: ReadonlySet<string> = new Set(KIND_NAMES.map((kind) => groupKindOf(apiVersionOf(kind), kind)));

/**
 * What the index adds to every served object (`config-object-index.ts`), stood in for while the
 * object is checked before it is served: values of the types the index gives, which no check reads
 * and no schema can reject. {@link withServedMetadata} puts the served values in their place.
 */
const SERVED_METADATA_STAND_INS = { uid: '', resourceVersion: '0', generation: 1, creationTimestamp: '' } as const;

/**
 * Parses one config file and checks each mesh-kind document as its reconciler will see it once
 * served: normalized (the namespace `default` filled in), with the index's metadata, without the
 * server's fields. Pure, so it runs the same on the calling thread and on the parse threads.
 */
export function checkConfigFile(path: string, text: string, clusterScoped?: ReadonlySet<string>): CheckedConfigFile {
  const parsed = parseConfigFile(path, text);
  for (const document of parsed.documents as CheckedDocument[]) {
    const { apiVersion, kind } = document.object;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !MESH_GROUP_KINDS.has(groupKindOf(apiVersion, kind))) continue;
    const normalized = normalizeConfigObject(document.object, clusterScoped);
    document.check = checkResource(validationInputOf({ ...normalized, metadata: withFields(normalized.metadata ?? {}, SERVED_METADATA_STAND_INS) }));
  }
  return parsed;
}

/** The object as validation sees it: what the server adds on its own (status, managed fields) left out. */
export function validationInputOf(object: KubeObject): KubeObject {
  const { status: _status, ...rest } = object;
  const metadata = object.metadata;
  if (!metadata || !('managedFields' in metadata)) return rest;
  const { managedFields: _managed, ...kept } = metadata;
  return { ...rest, metadata: kept };
}

/** A check made with the stand-ins, for the object served: its typed resource carries the served metadata. */
export function withServedMetadata(check: ResourceCheck, served: KubeObject): ResourceCheck {
  if (check.typed === undefined) return check;
  const { uid, resourceVersion, generation, creationTimestamp } = served.metadata ?? {};
  const metadata = { ...check.typed.metadata, uid, resourceVersion, generation, creationTimestamp };
  return { ...check, typed: { ...check.typed, metadata } as typeof check.typed };
}
