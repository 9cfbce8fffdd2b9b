import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { status } from '@grpc/grpc-js';
import type { Clock, Logger } from '../runtime/index.js';
import type { EnvoyProtos } from './envoy/envoy-protos.js';
import { isWildcardType, shortType } from './envoy/type-urls.js';
import type { EncodedResource, GenerateRequest, GenerateResult, Generator, NamedResource } from './generator.js';
import type { ConfigKey } from './push/push-request.js';
import type { PushSnapshot } from './push/push-snapshot.js';
import type { XdsCallbacks } from './xds-callbacks.js';
import type { ReadonlyHeldResources } from './held-resources.js';
import { newXdsCache } from './xds-cache.js';
import { contentText } from './content-text.js';
import { SharedResponseLists, type SharedResponseList } from './shared-response-lists.js';
import type { XdsConnection } from './xds-connection.js';
import { errorMessage } from '../runtime/index.js';

export interface RespondMode {
  /** Answer even when the generator has nothing to say (a request always gets a response). */
  always: boolean;
  /** Delta: send every generated resource, also those the proxy already holds at that version. */
  forceAll: boolean;
}

/** A response's resources encoded: kept with the generator's list when that list is shared. */
interface EncodedList {
  readonly encoded: readonly EncodedResource[];
  readonly bytes: number;
  /** The shared response list, once looked up (null: the list is not shared). */
  shared?: SharedResponseList | null;
}

export interface ResponseSenderOptions<C> {
  protos: EnvoyProtos;
  generators: readonly Generator<C>[];
  /** PILOT_XDS_CACHE_SIZE; undefined when PILOT_ENABLE_XDS_CACHE is off. */
  cacheSize: number | undefined;
  /** PILOT_XDS_SEND_TIMEOUT; 0 waits forever. */
  sendTimeoutMs: number;
  /** The push context in effect: only it may fill the cache. */
  current: () => PushSnapshot<C> | undefined;
  /** Sent in every response's `control_plane.identifier` (as JSON). */
  controlPlane?: { id: string; version: string };
  clock: Clock;
  callbacks: XdsCallbacks;
  /** The `ads` scope. */
  log: Logger;
}

/** Generates, encodes and sends the responses of the streams. */
export interface ResponseSender<C> {
  /** The `control_plane` field of responses, when the control plane is named. */
  readonly controlPlane: { identifier: string } | undefined;
  /** True when a generator serves the type. */
  generates(typeUrl: string): boolean;
  /** Generates one type for one proxy and sends it; generator failures are counted and skipped. */
  respond(con: XdsConnection, typeUrl: string, push: PushSnapshot<C>, request: GenerateRequest, mode: RespondMode): Promise<void>;
  /** Writes one response, bounded by PILOT_XDS_SEND_TIMEOUT; false when it was not sent (the stream is then ended). */
  send(con: XdsConnection, typeUrl: string, message: object): Promise<boolean>;
  /** Drops the cached bytes a new push context makes stale: those depending on `configsUpdated`, or all. */
  invalidate(configsUpdated: readonly ConfigKey[] | 'all'): void;
}

export function newResponseSender<C>(options: ResponseSenderOptions<C>): ResponseSender<C> {
  const { protos, clock, callbacks, log, sendTimeoutMs } = options;
  const generators: ReadonlyMap<string, Generator<C>> = new Map(options.generators.map((generator) => [generator.typeUrl, generator]));
  const controlPlane = options.controlPlane
    ? { identifier: JSON.stringify({ Component: 'meshd', ID: options.controlPlane.id, info: { version: options.controlPlane.version } }) }
    : undefined;
  const withControlPlane = controlPlane ? { control_plane: controlPlane } : {};
  const cache =
    options.cacheSize !== undefined
      ? newXdsCache<EncodedResource>(options.cacheSize, {
          read: (result) => callbacks.onCacheRead?.(result),
          evicted: (count) => callbacks.onCacheEvicted?.(count),
          size: (entries) => callbacks.onCacheSize?.(entries),
        })
      : undefined;
  const encodedShared = new WeakMap<NamedResource, { seq: number; encoded: EncodedResource }>();
  const sharedLists = new SharedResponseLists();

  const internalError = (con: XdsConnection, typeUrl: string, error: unknown, resource?: string): void => {
    callbacks.onGeneratorError?.(con, typeUrl, error);
    log.error(
      { connection: con.id, type: shortType(typeUrl), ...(resource ? { resource } : {}), error: errorMessage(error) },
      'generator failed; the other resources are still served',
    );
  };

  const encodeMessage = (typeUrl: string, name: string, message: object): EncodedResource => {
    const any = protos.encodeAny(typeUrl, message);
    return { name, any, version: createHash('sha1').update(any.value).digest('base64url').slice(0, 16) };
  };

  // A proxy's own resources (its inbound listener and clusters) have no cache key, yet proxies of
  // one workload, or of workloads alike, get the same: each distinct message of a push is encoded
  // once, found by its whole JSON text (a fraction of the encoding's cost; `contentText` says
  // when the text is no key, and such a message is encoded on its own).
  // The text is the key as JSON made it, by type: a key joined from two strings would be copied
  // flat at the first lookup, a second copy of every text.
  const byContent = { seq: -1, encoded: new Map<string, Map<string, EncodedResource>>() };
  const encodeByContent = (typeUrl: string, name: string, message: object, push: PushSnapshot<C>): EncodedResource => {
    if (byContent.seq !== push.seq) byContent.encoded = new Map();
    byContent.seq = push.seq;
    const text = contentText(message);
    if (text === undefined) return encodeMessage(typeUrl, name, message);
    let ofType = byContent.encoded.get(typeUrl);
    if (!ofType) byContent.encoded.set(typeUrl, (ofType = new Map()));
    const hit = ofType.get(text);
    if (hit) return hit.name === name ? hit : { ...hit, name };
    const built = encodeMessage(typeUrl, name, message);
    ofType.set(text, built);
    return built;
  };

  const encodeUncached = (typeUrl: string, resource: NamedResource, push: PushSnapshot<C>): EncodedResource => {
    const cacheable = cache !== undefined && resource.cacheKey !== undefined;
    if (cacheable) {
      const hit = cache?.get(typeUrl, push.version, resource.cacheKey as string);
      if (hit) return hit.name === resource.name ? hit : { ...hit, name: resource.name };
    }
    const message = typeof resource.resource === 'function' ? (resource.resource as () => object)() : resource.resource;
    if (resource.cacheKey === undefined) return encodeByContent(typeUrl, resource.name, message, push);
    const built = encodeMessage(typeUrl, resource.name, message);
    // Only the newest context may fill the cache: an older one would store stale bytes under the same version.
    if (cacheable && options.current()?.seq === push.seq) {
      cache?.set(typeUrl, push.version, resource.cacheKey as string, built, resource.dependsOn);
    }
    return built;
  };

  const encode = (typeUrl: string, resource: NamedResource, push: PushSnapshot<C>): EncodedResource => {
    // A generator that hands the same resource object to many proxies of one push is answered without a lookup.
    const shared = encodedShared.get(resource);
    if (shared && shared.seq === push.seq) return shared.encoded;
    const encoded = encodeUncached(typeUrl, resource, push);
    if (resource.cacheKey !== undefined) encodedShared.set(resource, { seq: push.seq, encoded });
    return encoded;
  };

  // A frozen list a generator hands to many proxies of one push is encoded once, and found shared
  // once: its proxies' responses are then written without visiting its resources.
  const encodedLists = new WeakMap<readonly NamedResource[], { seq: number; typeUrl: string; list: EncodedList }>();
  const encodeList = (con: XdsConnection, typeUrl: string, resources: readonly NamedResource[], push: PushSnapshot<C>): EncodedList => {
    const frozen = Object.isFrozen(resources);
    const known = frozen ? encodedLists.get(resources) : undefined;
    if (known && known.seq === push.seq && known.typeUrl === typeUrl) return known.list;
    const encoded: EncodedResource[] = [];
    let bytes = 0;
    let failed = false;
    for (const resource of resources) {
      try {
        const built = encode(typeUrl, resource, push);
        encoded.push(built);
        bytes += built.any.value.byteLength;
      } catch (error) {
        failed = true;
        internalError(con, typeUrl, error, resource.name);
      }
    }
    const list: EncodedList = { encoded, bytes };
    if (frozen && !failed) encodedLists.set(resources, { seq: push.seq, typeUrl, list });
    return list;
  };
  const sharedListOf = (typeUrl: string, list: EncodedList): SharedResponseList | undefined => {
    if (list.shared === undefined) list.shared = sharedLists.share(typeUrl, list.encoded, list.bytes) ?? null;
    return list.shared ?? undefined;
  };

  const send = async (con: XdsConnection, typeUrl: string, message: object): Promise<boolean> => {
    if (con.closed) return false;
    const started = performance.now();
    const writing = con.write(message).then(() => 'sent' as const);
    let timer: { cancel(): void } | undefined;
    const outcome =
      sendTimeoutMs > 0
        ? Promise.race([writing, new Promise<'timeout'>((resolve) => (timer = clock.setTimer(() => resolve('timeout'), sendTimeoutMs)))])
        : writing;
    writing.catch(() => undefined);
    try {
      if ((await outcome) === 'timeout') {
        callbacks.onSendTimeout?.(con, typeUrl);
        log.info({ connection: con.id, type: shortType(typeUrl) }, 'timeout writing');
        con.abort(status.DEADLINE_EXCEEDED, 'timeout sending');
        return false;
      }
      return true;
    } catch (error) {
      callbacks.onSendError?.(con, typeUrl, error);
      log.info({ connection: con.id, type: shortType(typeUrl), error: errorMessage(error) }, 'send failed');
      return false;
    } finally {
      timer?.cancel();
      callbacks.onSendDone?.(con, typeUrl, performance.now() - started);
    }
  };

  const respond = async (con: XdsConnection, typeUrl: string, push: PushSnapshot<C>, request: GenerateRequest, mode: RespondMode): Promise<void> => {
    const generator = generators.get(typeUrl);
    const watch = con.watch(typeUrl);
    if (!watch || con.closed) return;
    if (!generator) {
      log.debug({ connection: con.id, type: shortType(typeUrl) }, 'no generator for the type');
      return;
    }
    const started = performance.now();
    let result: GenerateResult | undefined;
    try {
      result = generator.generate(con.proxy, push.context, request);
    } catch (error) {
      internalError(con, typeUrl, error);
      return;
    }
    if (!result) {
      if (!mode.always) return;
      result = { resources: [] };
    }
    const list = encodeList(con, typeUrl, result.resources, push);
    const { encoded, bytes: encodedBytes } = list;

    const nonce = `${push.version}/${randomUUID()}`;
    const held = con.heldOf(typeUrl);
    let message: object;
    let sending: readonly EncodedResource[];
    let removed: string[] = [];
    if (con.kind === 'sotw') {
      const shared = sharedListOf(typeUrl, list);
      sending = shared?.resources ?? encoded;
      const resources = shared?.anys ?? encoded.map((resource) => resource.any);
      message = { version_info: push.version, resources, type_url: typeUrl, nonce, ...withControlPlane };
    } else {
      sending = mode.forceAll || held.size === 0 ? encoded : encoded.filter((resource) => held.get(resource.name)?.version !== resource.version);
      removed = result.removed ? [...result.removed] : removedNames(encoded, held, watch, request, mode.always);
      if (!mode.always && sending.length === 0 && removed.length === 0) return;
      const shared = sending === encoded ? sharedListOf(typeUrl, list) : undefined;
      if (shared) sending = shared.resources;
      message = {
        system_version_info: push.version,
        resources: shared?.deltaResources ?? sending.map((resource) => ({ name: resource.name, version: resource.version, resource: resource.any })),
        type_url: typeUrl,
        removed_resources: removed,
        nonce,
        ...withControlPlane,
      };
    }

    if (!(await send(con, typeUrl, message))) return;

    const now = clock.now();
    con.recordSent(typeUrl, { nonce, version: push.version, resources: sending, removed, complete: isWildcardType(typeUrl) && request.delta === undefined, at: now });
    let bytes = sending.length === encoded.length ? encodedBytes : 0;
    if (sending.length !== encoded.length) for (const resource of sending) bytes += resource.any.value.byteLength;
    callbacks.onStreamResponse?.(con, typeUrl, { bytes, durationMs: performance.now() - started });
    log.debug({ connection: con.id, type: shortType(typeUrl), resources: sending.length, removed: removed.length, nonce }, 'push');
  };

  return {
    controlPlane,
    generates: (typeUrl) => generators.has(typeUrl),
    respond,
    send,
    invalidate(configsUpdated) {
      if (configsUpdated === 'all') cache?.clearAll();
      else cache?.clear(configsUpdated);
    },
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
