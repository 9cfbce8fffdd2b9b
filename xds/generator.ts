import type { EncodedAny } from './envoy/envoy-protos.js';
import type { Proxy } from './proxy.js';
import type { PushFindings } from './push/push-findings.js';
import type { ConfigKey, PushRequest } from './push/push-request.js';

/**
 * What a generator is asked for: the push request it answers (`full: false` for endpoint-only
 * pushes, where only EDS is asked; a proxy's own request is a full push of everything) and the
 * proxy's subscription.
 */
export interface GenerateRequest extends PushRequest {
  /** The names the proxy subscribes to; empty for a wildcard subscription (all of the type). */
  readonly names: readonly string[];
  /** Set when `names` is a shared subscription: every request with this key names exactly these names. */
  readonly namesKey?: string;
  /** Set when a request changed the subscription: generate for `subscribed` only. */
  readonly delta?: { readonly subscribed: readonly string[]; readonly unsubscribed: readonly string[] };
  /** The push's memo, one per push and type; without it a generator shares nothing between calls. */
  readonly memo?: PushMemo;
  /** Where the generator reports what it found wrong and left out (a conflicting listener, a duplicate domain); nowhere without it. */
  readonly findings?: PushFindings;
}

/**
 * What generators build once for every proxy of a push, by string key (see xds/encoding/README.md):
 * a new push gets an empty memo.
 */
export interface PushMemo {
  /** The value under `key`, built by `build` the first time; the key names everything the value depends on besides the push context. */
  get<T>(key: string, build: () => T): T;
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
  /** Set when the generator hands this resource to every proxy of the push that gets it under this key: encoded once per push. */
  readonly sharedKey?: string;
}

export interface GenerateResult {
  readonly resources: readonly NamedResource[];
  /** Names that no longer exist (delta streams). Without it, removals are computed from what the proxy holds. */
  readonly removed?: readonly string[];
  /** Set when the generator hands this list to every proxy of the push that gets it under this key: encoded once per push. */
  readonly sharedKey?: string;
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
