import type { EnvoyProtos } from '../envoy/envoy-protos.js';
import type { EncodedResource, GenerateResult, NamedResource, PushMemo } from '../generator.js';
import type { ConfigKey } from '../push/push-request.js';
import { PushMemoMap, PushScoped, type PushIdentity } from './push-scoped.js';
import { newResourceEncodings } from './resource-encodings.js';
import { SharedResponseLists, type SharedResponseList } from './shared-response-lists.js';
import { newXdsCache, type XdsCache, type XdsCacheMetrics } from './xds-cache.js';

/** A response's resources encoded. */
export interface EncodedList {
  readonly encoded: readonly EncodedResource[];
  readonly bytes: number;
  /** The shared response list, once looked up (null: the list is not shared). */
  shared?: SharedResponseList | null;
}

export interface ResourceEncoderOptions {
  protos: Pick<EnvoyProtos, 'encodeAny'>;
  /** PILOT_XDS_CACHE_SIZE; undefined when PILOT_ENABLE_XDS_CACHE is off. */
  cacheSize: number | undefined;
  /** The push in effect: only it may fill the cross-push cache. */
  current: () => PushIdentity | undefined;
  metrics: XdsCacheMetrics;
}

/** Reports a resource that could not be encoded (its name and why). */
export type ErrorReport = (resource: string, error: unknown) => void;

/** Every cache of a push, behind the keying rule of README.md. */
export interface ResourceEncoder {
  /** The memo the generators of the type get for the push. */
  memo(push: PushIdentity, typeUrl: string): PushMemo;
  /** A generated list encoded; a resource that cannot be encoded is left out and reported. */
  encode(typeUrl: string, result: GenerateResult, push: PushIdentity, onError: ErrorReport): EncodedList;
  /** The response list shared by content with `list`; undefined when the list is too short to share. */
  shared(typeUrl: string, list: EncodedList): SharedResponseList | undefined;
  /** Drops the cross-push entries a new push context makes stale: those depending on `configsUpdated`, or all. */
  invalidate(configsUpdated: readonly ConfigKey[] | 'all'): void;
}

export function newResourceEncoder(options: ResourceEncoderOptions): ResourceEncoder {
  const cache: XdsCache<EncodedResource> | undefined = options.cacheSize !== undefined ? newXdsCache(options.cacheSize, options.metrics) : undefined;
  const encodeResource = newResourceEncodings({ protos: options.protos, cache, current: options.current });
  const memos = new PushScoped<unknown>();
  const lists = new PushScoped<EncodedList>();
  const sharedLists = new SharedResponseLists();

  const encodeAll = (
    typeUrl: string,
    resources: readonly NamedResource[],
    push: PushIdentity,
    onError: ErrorReport,
  ): { list: EncodedList; failed: boolean } => {
    const encoded: EncodedResource[] = [];
    let bytes = 0;
    let failed = false;
    for (const resource of resources) {
      try {
        const built = encodeResource(typeUrl, resource, push);
        encoded.push(built);
        bytes += built.any.value.byteLength;
      } catch (error) {
        failed = true;
        onError(resource.name, error);
      }
    }
    return { list: { encoded, bytes }, failed };
  };

  return {
    memo: (push, typeUrl) => new PushMemoMap(memos.of(push.seq, typeUrl)),
    encode(typeUrl, result, push, onError) {
      // A list a generator hands to many proxies of one push is encoded once, and found shared
      // once: its proxies' responses are then written without visiting its resources.
      const { sharedKey } = result;
      if (sharedKey === undefined) return encodeAll(typeUrl, result.resources, push, onError).list;
      const ofType = lists.of(push.seq, typeUrl);
      const known = ofType.get(sharedKey);
      if (known) return known;
      const { list, failed } = encodeAll(typeUrl, result.resources, push, onError);
      if (!failed) ofType.set(sharedKey, list);
      return list;
    },
    shared(typeUrl, list) {
      if (list.shared === undefined) list.shared = sharedLists.share(typeUrl, list.encoded, list.bytes) ?? null;
      return list.shared ?? undefined;
    },
    invalidate(configsUpdated) {
      if (configsUpdated === 'all') cache?.clearAll();
      else cache?.clear(configsUpdated);
    },
  };
}
