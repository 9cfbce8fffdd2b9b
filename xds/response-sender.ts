import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Clock, Logger } from '../runtime/index.js';
import { errorMessage } from '../runtime/index.js';
import { newBoundedSend } from './bounded-send.js';
import { newResourceEncoder, type EncodedList, type ResourceEncoder } from './encoding/index.js';
import type { EnvoyProtos } from './envoy/envoy-protos.js';
import { isWildcardType, shortType } from './envoy/type-urls.js';
import type { GenerateRequest, GenerateResult, Generator } from './generator.js';
import type { ConfigKey } from './push/push-request.js';
import type { PushSnapshot } from './push/push-snapshot.js';
import { buildDeltaResponse, buildSotwResponse, type ResponseEnvelope, type ResponseMessage } from './response-message.js';
import type { WatchState } from './watch-state.js';
import type { XdsCallbacks } from './xds-callbacks.js';
import type { XdsConnection } from './xds-connection.js';

export interface RespondMode {
  /** Answer even when the generator has nothing to say (a request always gets a response). */
  always: boolean;
  /** Delta: send every generated resource, also those the proxy already holds at that version. */
  forceAll: boolean;
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

/** The responder: generate → encode (xds/encoding/) → build the response → send → record what was sent. */
export function newResponseSender<C>(options: ResponseSenderOptions<C>): ResponseSender<C> {
  const { clock, callbacks, log } = options;
  const generators: ReadonlyMap<string, Generator<C>> = new Map(options.generators.map((generator) => [generator.typeUrl, generator]));
  const controlPlane = options.controlPlane
    ? { identifier: JSON.stringify({ Component: 'meshd', ID: options.controlPlane.id, info: { version: options.controlPlane.version } }) }
    : undefined;
  const withControlPlane = controlPlane ? { control_plane: controlPlane } : {};
  const encoder = newResourceEncoder({
    protos: options.protos,
    cacheSize: options.cacheSize,
    current: options.current,
    metrics: {
      read: (result) => callbacks.onCacheRead?.(result),
      evicted: (count) => callbacks.onCacheEvicted?.(count),
      size: (entries) => callbacks.onCacheSize?.(entries),
    },
  });
  const send = newBoundedSend(options);
  const internalError = (con: XdsConnection, typeUrl: string, error: unknown, resource?: string): void => {
    callbacks.onGeneratorError?.(con, typeUrl, error);
    log.error(
      { connection: con.id, type: shortType(typeUrl), ...(resource ? { resource } : {}), error: errorMessage(error) },
      'generator failed; the other resources are still served',
    );
  };

  /** The generator's answer with the push's memo; undefined when there is nothing to send (or it threw). */
  const generate = (
    con: XdsConnection,
    generator: Generator<C>,
    push: PushSnapshot<C>,
    request: GenerateRequest,
    always: boolean,
  ): GenerateResult | undefined => {
    let result: GenerateResult | undefined;
    try {
      result = generator.generate(con.proxy, push.context, { ...request, memo: encoder.memo(push, generator.typeUrl), findings: push.findings });
    } catch (error) {
      internalError(con, generator.typeUrl, error);
      return undefined;
    }
    return result ?? (always ? { resources: [] } : undefined);
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
    const result = generate(con, generator, push, request, mode.always);
    if (!result) return;
    const list = encoder.encode(typeUrl, result, push, (resource, error) => internalError(con, typeUrl, error, resource));
    const envelope: ResponseEnvelope = { typeUrl, version: push.version, nonce: `${push.version}/${randomUUID()}`, controlPlane: withControlPlane };
    const response = buildResponse(con, envelope, list, encoder, { result, watch, request, ...mode });
    if (!response || !(await send(con, typeUrl, response.message))) return;
    con.recordSent(typeUrl, {
      nonce: envelope.nonce,
      version: push.version,
      resources: response.sending,
      removed: response.removed,
      complete: isWildcardType(typeUrl) && request.delta === undefined,
      at: clock.now(),
    });
    callbacks.onStreamResponse?.(con, typeUrl, { bytes: response.bytes, durationMs: performance.now() - started });
    log.debug(
      { connection: con.id, type: shortType(typeUrl), resources: response.sending.length, removed: response.removed.length, nonce: envelope.nonce },
      'push',
    );
  };

  return {
    controlPlane,
    generates: (typeUrl) => generators.has(typeUrl),
    respond,
    send,
    invalidate: (configsUpdated) => encoder.invalidate(configsUpdated),
  };
}

/** The response of the stream's flavour; undefined when a delta push has nothing to say. */
function buildResponse(
  con: XdsConnection,
  envelope: ResponseEnvelope,
  list: EncodedList,
  encoder: ResourceEncoder,
  input: { result: GenerateResult; watch: WatchState; request: GenerateRequest; always: boolean; forceAll: boolean },
): ResponseMessage | undefined {
  if (con.kind === 'sotw') return buildSotwResponse(envelope, list, encoder.shared(envelope.typeUrl, list));
  return buildDeltaResponse(envelope, list, () => encoder.shared(envelope.typeUrl, list), { ...input, held: con.heldOf(envelope.typeUrl) });
}
