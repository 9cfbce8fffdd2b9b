import type { EncodedList, SharedResponseList } from './encoding/index.js';
import type { EncodedResource, GenerateRequest, GenerateResult } from './generator.js';
import type { ReadonlyHeldResources } from './held-resources.js';
import type { WatchState } from './watch-state.js';

/** A response ready to write, with what it sends. */
export interface ResponseMessage {
  readonly message: object;
  /** The resources the response carries. */
  readonly sending: readonly EncodedResource[];
  readonly removed: readonly string[];
  /** The bytes of the resources the response carries. */
  readonly bytes: number;
}

/** What every response of a stream carries: the type, the push version, the nonce and the control plane. */
export interface ResponseEnvelope {
  readonly typeUrl: string;
  readonly version: string;
  readonly nonce: string;
  readonly controlPlane: { readonly control_plane?: { readonly identifier: string } };
}

export interface DeltaResponseInput {
  readonly result: GenerateResult;
  readonly held: ReadonlyHeldResources;
  readonly watch: WatchState;
  readonly request: GenerateRequest;
  /** Answering a request: a response is written even when nothing changed. */
  readonly always: boolean;
  /** Every generated resource is sent, also those the proxy holds at that version. */
  readonly forceAll: boolean;
}

/** A state-of-the-world response: the whole list, as the list shared by content when there is one. */
export function buildSotwResponse(envelope: ResponseEnvelope, list: EncodedList, shared: SharedResponseList | undefined): ResponseMessage {
  const resources = shared?.anys ?? list.encoded.map((resource) => resource.any);
  return {
    message: { version_info: envelope.version, resources, type_url: envelope.typeUrl, nonce: envelope.nonce, ...envelope.controlPlane },
    sending: shared?.resources ?? list.encoded,
    removed: [],
    bytes: list.bytes,
  };
}

/**
 * A delta response: the resources the proxy does not hold at their version, and the removals;
 * undefined when a push has nothing to say. `share` finds the list shared by content, asked only
 * when the whole list is sent.
 */
export function buildDeltaResponse(
  envelope: ResponseEnvelope,
  list: EncodedList,
  share: () => SharedResponseList | undefined,
  input: DeltaResponseInput,
): ResponseMessage | undefined {
  const { encoded } = list;
  const { held } = input;
  const changed = input.forceAll || held.size === 0 ? encoded : encoded.filter((resource) => held.get(resource.name)?.version !== resource.version);
  const removed = input.result.removed ? [...input.result.removed] : removedNames(encoded, held, input.watch, input.request, input.always);
  if (!input.always && changed.length === 0 && removed.length === 0) return undefined;
  const shared = changed === encoded ? share() : undefined;
  const sending = shared ? shared.resources : changed;
  let bytes = list.bytes;
  if (sending.length !== encoded.length) {
    bytes = 0;
    for (const resource of sending) bytes += resource.any.value.byteLength;
  }
  return {
    message: {
      system_version_info: envelope.version,
      resources: shared?.deltaResources ?? sending.map((resource) => ({ name: resource.name, version: resource.version, resource: resource.any })),
      type_url: envelope.typeUrl,
      removed_resources: removed,
      nonce: envelope.nonce,
      ...envelope.controlPlane,
    },
    sending,
    removed,
    bytes,
  };
}

/**
 * Delta removals when the generator does not list them: names the proxy holds (or has just
 * asked for) that the generator no longer returns. Only a full generation can tell.
 */
function removedNames(
  encoded: readonly EncodedResource[],
  held: ReadonlyHeldResources,
  watch: { wildcard: boolean; names: readonly string[] },
  request: GenerateRequest,
  answeringRequest: boolean,
): string[] {
  if (!request.full) return [];
  if (request.delta) return notGenerated(request.delta.subscribed, encoded);
  const candidates = watch.wildcard ? [...held.names()] : answeringRequest ? watch.names : watch.names.filter((name) => held.has(name));
  return notGenerated(candidates, encoded).sort();
}

/** The names no generated resource has. A generator answering every name in their order (EDS) is checked without a set. */
function notGenerated(names: readonly string[], encoded: readonly EncodedResource[]): string[] {
  if (names.length === 0) return [];
  let matched = 0;
  while (matched < names.length && matched < encoded.length && names[matched] === encoded[matched]?.name) matched++;
  if (matched === names.length) return [];
  const generated = new Set(encoded.map((resource) => resource.name));
  return names.filter((name) => !generated.has(name));
}
