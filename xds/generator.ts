import type { EncodedAny } from './envoy/envoy-protos.js';
import type { Proxy } from './proxy.js';
import type { ConfigKey, PushRequest } from './push/push-request.js';

/**
 * What a generator is asked for: the push request it answers (`full: false` for endpoint-only
 * pushes, where only EDS is asked; a proxy's own request is a full push of everything) and the
 * proxy's subscription.
 */
export interface GenerateRequest extends PushRequest {
  /** The names the proxy subscribes to; empty for a wildcard subscription (all of the type). */
  readonly names: readonly string[];
  /** Set when a request changed the subscription: generate for `subscribed` only. */
  readonly delta?: { readonly subscribed: readonly string[]; readonly unsubscribed: readonly string[] };
}

/** One generated resource: its name and its Envoy message (snake_case plain object, nested `Any` with `@type`). */
export interface NamedResource {
  readonly name: string;
  /** The message, or a function building it that runs only on a cache miss. */
  readonly resource: object | (() => object);
  /**
   * Shares the encoded bytes across proxies under this key (together with the type and the push
   * version). It must name everything the message depends on besides the push context.
   */
  readonly cacheKey?: string;
  /** Configs the resource is built from: an endpoint-only change to one of them drops the cached bytes. Absent means any change does. */
  readonly dependsOn?: readonly ConfigKey[];
}

export interface GenerateResult {
  readonly resources: readonly NamedResource[];
  /** Names that no longer exist (delta streams). Without it, removals are computed from what the proxy holds. */
  readonly removed?: readonly string[];
}

/**
 * Builds the resources of one type for one proxy: a pure function of the proxy, the push
 * context and the request. Returns undefined when the change does not affect this proxy.
 */
export interface Generator<C = unknown> {
  readonly typeUrl: string;
  generate(proxy: Proxy, push: C, request: GenerateRequest): GenerateResult | undefined;
}

/** A resource ready to send; shared between proxies through the cache. */
export interface EncodedResource {
  readonly name: string;
  readonly any: EncodedAny;
  /** A digest of the bytes: the per-resource version of delta responses. */
  readonly version: string;
}
