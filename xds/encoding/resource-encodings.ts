import { createHash } from 'node:crypto';
import type { EnvoyProtos } from '../envoy/envoy-protos.js';
import type { EncodedResource, NamedResource } from '../generator.js';
import { contentText } from './content-text.js';
import { PushScoped, type PushIdentity } from './push-scoped.js';
import type { XdsCache } from './xds-cache.js';

export interface ResourceEncodingsOptions {
  protos: Pick<EnvoyProtos, 'encodeAny'>;
  /** The cross-push cache; undefined when PILOT_ENABLE_XDS_CACHE is off. */
  cache: XdsCache<EncodedResource> | undefined;
  /** The push in effect: only it may fill the cross-push cache. */
  current: () => PushIdentity | undefined;
}

/** Encodes one generated resource: found by its shared key within the push, by its cache key across pushes, or by its content within the push. */
export type EncodeResource = (typeUrl: string, resource: NamedResource, push: PushIdentity) => EncodedResource;

export function newResourceEncodings(options: ResourceEncodingsOptions): EncodeResource {
  const { protos, cache } = options;
  const sharedResources = new PushScoped<EncodedResource>();
  const byContent = new PushScoped<EncodedResource>();
  const parts = new PushScoped<Uint8Array>();

  const encodeMessage = (typeUrl: string, name: string, message: object, push: PushIdentity): EncodedResource => {
    const any = protos.encodeAny(typeUrl, message, parts.of(push.seq, typeUrl));
    return { name, any, version: createHash('sha1').update(any.value).digest('base64url').slice(0, 16) };
  };

  // A proxy's own resources (its inbound listener and clusters) have no cache key, yet proxies of
  // one workload, or of workloads alike, get the same: each distinct message of a push is encoded
  // once, found by its whole JSON text (a fraction of the encoding's cost; `contentText` says
  // when the text is no key, and such a message is encoded on its own).
  // The text is the key as JSON made it, under its type: a key joined from two strings would be
  // copied flat at the first lookup, a second copy of every text.
  const encodeByContent = (typeUrl: string, name: string, message: object, push: PushIdentity): EncodedResource => {
    const text = contentText(message);
    if (text === undefined) return encodeMessage(typeUrl, name, message, push);
    const ofType = byContent.of(push.seq, typeUrl);
    const hit = ofType.get(text);
    if (hit) return hit.name === name ? hit : { ...hit, name };
    const built = encodeMessage(typeUrl, name, message, push);
    ofType.set(text, built);
    return built;
  };

  const encodeThroughCache = (typeUrl: string, resource: NamedResource, push: PushIdentity): EncodedResource => {
    const { cacheKey } = resource;
    if (cache && cacheKey !== undefined) {
      const hit = cache.get(typeUrl, push.version, cacheKey);
      if (hit) return hit.name === resource.name ? hit : { ...hit, name: resource.name };
    }
    const message = typeof resource.resource === 'function' ? resource.resource() : resource.resource;
    if (cacheKey === undefined) return encodeByContent(typeUrl, resource.name, message, push);
    const built = encodeMessage(typeUrl, resource.name, message, push);
    // Only the newest context may fill the cache: an older one would store stale bytes under the same version.
    if (cache && options.current()?.seq === push.seq) cache.set(typeUrl, push.version, cacheKey, built, resource.dependsOn);
    return built;
  };

  // A resource the generator hands to many proxies of one push is answered without a cache lookup.
  return (typeUrl, resource, push) => {
    if (resource.sharedKey === undefined) return encodeThroughCache(typeUrl, resource, push);
    const ofType = sharedResources.of(push.seq, typeUrl);
    let encoded = ofType.get(resource.sharedKey);
    if (!encoded) ofType.set(resource.sharedKey, (encoded = encodeThroughCache(typeUrl, resource, push)));
    return encoded;
  };
}
