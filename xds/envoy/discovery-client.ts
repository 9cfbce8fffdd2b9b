import { Metadata, makeGenericClientConstructor, type ChannelCredentials, type ChannelOptions, type Client, type ClientDuplexStream, type ServiceDefinition } from '@grpc/grpc-js';
import type { EncodedAny } from './encoded-any.js';
import { ADS_SERVICE, SDS_SERVICE, type EnvoyProtos } from './envoy-protos.js';
import { errorMessage } from '../../controllers/runtime/index.js';

/** A state-of-the-world DiscoveryRequest as the client writes it. */
export interface DiscoveryRequest {
  node?: object;
  type_url: string;
  resource_names: readonly string[];
  version_info: string;
  response_nonce: string;
  error_detail?: { code: number; message: string };
}

/** A state-of-the-world DiscoveryResponse as the caller gets it: the resources still encoded. */
export interface DiscoveryResponse {
  version_info: string;
  type_url: string;
  nonce: string;
  resources: EncodedAny[];
  /** The encoded size (`raw` clients only). */
  bytes?: number;
}

/** Reconnection: the first delay, doubled after each attempt that got no response, up to `maxMs`. */
export interface Backoff {
  /** Default 200 ms. */
  firstMs?: number;
  /** Default 30 s. */
  maxMs?: number;
  /** Each delay drawn in [½, 1] of it (default): clients refused together come back spread out. */
  jitter?: boolean;
}

export interface StreamEnd {
  reason: string;
  /** Set when the stream failed (a status other than OK). */
  error?: Error;
  /** The delay before the stream is reopened (with `reconnect`). */
  retryMs?: number;
}

export interface DiscoveryClientOptions {
  /** The service definition comes from these protos, and `decode` uses them. */
  protos: EnvoyProtos;
  /** `host:port`, `unix:///path` or `unix:path`. */
  target: string;
  credentials: ChannelCredentials;
  channelOptions?: ChannelOptions;
  /** The aggregated service (default) or the secret service. */
  service?: 'ads' | 'sds';
  /** Per-stream call metadata (a bearer token), read at every (re)connect. */
  metadata?: () => Promise<Metadata> | Metadata;
  /** The node, as a DiscoveryRequest carries it (snake_case, metadata as a Struct). */
  node?: object;
  /** ACKs and NACKs carry the node too (default); false leaves it to the subscribing requests. */
  nodeOnAcks?: boolean;
  /** Responses are read only as far as an ACK needs (no conversion to plain objects): for load generators. */
  raw?: boolean;
  /** The subscriptions sent, in order, whenever a stream opens. */
  initial?: readonly (readonly [typeUrl: string, names: readonly string[]])[];
  /** Every response of the managed stream; the caller answers with `ack` or `nack` (or not at all). */
  onResponse?: (response: DiscoveryResponse) => void;
  /** The managed stream ended while the client was open. */
  onStreamEnd?: (end: StreamEnd) => void;
  /** Reopen the managed stream after it ends; without it, an ended stream stays ended. */
  reconnect?: Backoff;
}

export interface DiscoveryClient {
  /** Opens the managed stream. */
  start(): void;
  /** Subscribes a type to `names` ([] is the wildcard) on the open stream, unless they are already its names. */
  subscribe(typeUrl: string, names: readonly string[]): void;
  /** Accepts a response: its version becomes the type's version. */
  ack(response: DiscoveryResponse): void;
  /** Rejects a response (error_detail INVALID_ARGUMENT): the type keeps its last accepted version. */
  nack(response: DiscoveryResponse, message: string): void;
  /** The response's resources as plain objects (throws on a resource the protos cannot decode). */
  decode(response: DiscoveryResponse): Record<string, unknown>[];
  /** A further stream on the same channel, left entirely to the caller (tests). */
  stream<Response = DiscoveryResponse>(options?: { delta?: boolean; metadata?: Metadata }): ClientDuplexStream<object, Response>;
  /** Ends the managed stream and the channel. */
  close(): void;
}

const METHODS = {
  ads: { service: ADS_SERVICE, sotw: 'StreamAggregatedResources', delta: 'DeltaAggregatedResources' },
  sds: { service: SDS_SERVICE, sotw: 'StreamSecrets', delta: 'DeltaSecrets' },
} as const;

type StreamMethod = (metadata: Metadata) => ClientDuplexStream<object, unknown>;

interface Session {
  call?: ClientDuplexStream<object, DiscoveryResponse>;
  /** Subscribed names and last nonces by type, for this stream only. */
  names: Map<string, readonly string[]>;
  nonces: Map<string, string>;
}

/**
 * One xDS client over grpc-js, state of the world: the managed stream subscribes, tracks each
 * type's accepted version (kept across reconnects) and the stream's nonces, and ACKs or NACKs as
 * the caller decides; `stream` opens unmanaged ones for tests.
 */
export function newDiscoveryClient(options: DiscoveryClientOptions): DiscoveryClient {
  const { protos } = options;
  const methods = METHODS[options.service ?? 'ads'];
  const definition = options.raw ? rawDefinition(protos, methods.service, methods.sotw) : protos.serviceDefinition(methods.service);
  const Ctor = makeGenericClientConstructor(definition, methods.service);
  const client = new Ctor(options.target, options.credentials, options.channelOptions) as unknown as Client & Record<string, StreamMethod>;
  const versions = new Map<string, string>();
  const firstMs = options.reconnect?.firstMs ?? 200;
  let backoffMs = firstMs;
  let session: Session | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const write = (typeUrl: string, nonce: string, extra?: Pick<DiscoveryRequest, 'error_detail'>, withNode = true): void => {
    const call = session?.call;
    if (!call) return;
    const request: DiscoveryRequest = {
      ...(withNode && options.node ? { node: options.node } : {}),
      type_url: typeUrl,
      resource_names: session?.names.get(typeUrl) ?? [],
      version_info: versions.get(typeUrl) ?? '',
      response_nonce: nonce,
      ...extra,
    };
    call.write(request);
  };

  const request = (typeUrl: string, names: readonly string[]): void => {
    if (!session?.call) return;
    session.names.set(typeUrl, names);
    write(typeUrl, session.nonces.get(typeUrl) ?? '');
  };

  const ended = (ending: Session, reason: string, error?: Error): void => {
    if (session !== ending) return;
    session = undefined;
    if (closed) return;
    const end: StreamEnd = { reason, ...(error ? { error } : {}) };
    if (options.reconnect) {
      const { maxMs = 30_000, jitter = true } = options.reconnect;
      end.retryMs = jitter ? Math.round(backoffMs * (0.5 + Math.random() * 0.5)) : backoffMs;
      retryTimer = setTimeout(() => void open(), end.retryMs);
      backoffMs = Math.min(backoffMs * 2, maxMs);
    }
    options.onStreamEnd?.(end);
  };

  const open = async (): Promise<void> => {
    if (closed) return;
    const opening: Session = { names: new Map(), nonces: new Map() };
    session = opening;
    let metadata: Metadata;
    try {
      metadata = options.metadata ? await options.metadata() : new Metadata();
    } catch (error) {
      return ended(opening, `no call metadata: ${errorMessage(error)}`, error instanceof Error ? error : new Error(errorMessage(error)));
    }
    if (closed || session !== opening) return;
    const call = (client[methods.sotw] as StreamMethod)(metadata) as ClientDuplexStream<object, DiscoveryResponse>;
    opening.call = call;
    call.on('data', (response: DiscoveryResponse) => {
      backoffMs = firstMs;
      opening.nonces.set(response.type_url, response.nonce);
      options.onResponse?.(response);
    });
    call.on('error', (error: Error) => ended(opening, error.message, error));
    call.on('end', () => ended(opening, 'stream ended'));
    for (const [typeUrl, names] of options.initial ?? []) request(typeUrl, names);
  };

  return {
    start: () => void open(),
    subscribe(typeUrl, names) {
      const before = session?.names.get(typeUrl);
      if (!before || before.join('\n') !== names.join('\n')) request(typeUrl, names);
    },
    ack(response) {
      versions.set(response.type_url, response.version_info);
      write(response.type_url, response.nonce, undefined, options.nodeOnAcks ?? true);
    },
    nack(response, message) {
      write(response.type_url, response.nonce, { error_detail: { code: 3, message } }, options.nodeOnAcks ?? true);
    },
    decode: (response) => response.resources.map((any) => protos.decodeAny(any)),
    stream<Response>(streamOptions: { delta?: boolean; metadata?: Metadata } = {}) {
      const method = streamOptions.delta ? methods.delta : methods.sotw;
      return (client[method] as StreamMethod)(streamOptions.metadata ?? new Metadata()) as ClientDuplexStream<object, Response>;
    },
    close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      session?.call?.cancel();
      client.close();
    },
  };
}

/** The service with a state-of-the-world method that decodes only the envelope of a response. */
function rawDefinition(protos: EnvoyProtos, service: string, method: string): ServiceDefinition {
  const base = protos.serviceDefinition(service);
  const responseType = protos.lookupType('envoy.service.discovery.v3.DiscoveryResponse');
  const responseDeserialize = (bytes: Buffer): DiscoveryResponse => {
    const { version_info, type_url, nonce, resources } = responseType.decode(bytes) as unknown as DiscoveryResponse;
    return { version_info, type_url, nonce, resources, bytes: bytes.length };
  };
  return { ...base, [method]: { ...base[method], responseDeserialize } } as ServiceDefinition;
}
