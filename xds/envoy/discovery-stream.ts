import {
  Metadata,
  makeGenericClientConstructor,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientDuplexStream,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { ADS_SERVICE, SDS_SERVICE, type EnvoyProtos } from './envoy-protos.js';
import { errorMessage } from '../../runtime/index.js';
import type { RawDiscoveryCodec } from './raw-discovery-codec.js';

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

/** What the state-of-the-world and the delta client share: where to connect, how, and what to do when the stream ends. */
export interface DiscoveryConnectionOptions {
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
  /**
   * Responses read only as far as an ACK needs (no conversion to plain objects) and requests
   * written by this codec: for load generators, whose streams share one codec.
   */
  raw?: RawDiscoveryCodec;
  /** The managed stream ended while the client was open. */
  onStreamEnd?: (end: StreamEnd) => void;
  /** Reopen the managed stream after it ends; without it, an ended stream stays ended. */
  reconnect?: Backoff;
}

export type StreamFlavour = 'sotw' | 'delta';

const METHODS = {
  ads: { service: ADS_SERVICE, sotw: 'StreamAggregatedResources', delta: 'DeltaAggregatedResources' },
  sds: { service: SDS_SERVICE, sotw: 'StreamSecrets', delta: 'DeltaSecrets' },
} as const;

type StreamMethod = (metadata: Metadata) => ClientDuplexStream<object, unknown>;

/** One gRPC channel to a discovery service, its streams opened by flavour. */
export interface DiscoveryChannel {
  open<Response>(flavour: StreamFlavour, metadata: Metadata): ClientDuplexStream<object, Response>;
  close(): void;
}

export function newDiscoveryChannel(options: DiscoveryConnectionOptions): DiscoveryChannel {
  const methods = METHODS[options.service ?? 'ads'];
  const definition = options.raw ? rawDefinition(options.raw, methods) : options.protos.serviceDefinition(methods.service);
  const Ctor = makeGenericClientConstructor(definition, methods.service);
  const client = new Ctor(options.target, options.credentials, options.channelOptions) as unknown as Client & Record<string, StreamMethod>;
  return {
    open: <Response>(flavour: StreamFlavour, metadata: Metadata) =>
      (client[methods[flavour]] as StreamMethod)(metadata) as ClientDuplexStream<object, Response>,
    close: () => client.close(),
  };
}

/** The service of load generators: the codec's request encoder and response decoder in place of the plain ones. */
function rawDefinition(codec: RawDiscoveryCodec, methods: (typeof METHODS)[keyof typeof METHODS]): ServiceDefinition {
  const base = codec.protos.serviceDefinition(methods.service);
  const raw = (flavour: StreamFlavour): object => ({ ...base[methods[flavour]], ...codec.methods(flavour) });
  return { ...base, [methods.sotw]: raw('sotw'), [methods.delta]: raw('delta') } as ServiceDefinition;
}

export interface ManagedStreamOptions<Response> extends DiscoveryConnectionOptions {
  flavour: StreamFlavour;
  /** A new stream is open: write its first requests with `write`. */
  onOpen: () => void;
  /** Every response of the current stream. */
  onResponse: (response: Response) => void;
}

/** The managed stream: one call at a time, reopened with backoff when it ends. */
export interface ManagedStream {
  start(): void;
  /** Writes on the open call; false when none is open (the next `onOpen` starts over). */
  write(request: object): boolean;
  /** Whether a call is open. */
  isOpen(): boolean;
  /** A further stream on the same channel, left entirely to the caller (tests). */
  unmanaged<Response>(flavour: StreamFlavour, metadata?: Metadata): ClientDuplexStream<object, Response>;
  /** Ends the managed stream and the channel. */
  close(): void;
}

/**
 * Opens the stream (reading the call metadata first), hands each response on, and when it ends
 * reports it and reopens it after a backoff that a response resets: the lifecycle both xDS
 * flavours share.
 */
export function newManagedStream<Response>(options: ManagedStreamOptions<Response>): ManagedStream {
  const channel = newDiscoveryChannel(options);
  const firstMs = options.reconnect?.firstMs ?? 200;
  let backoffMs = firstMs;
  /** The attempt in progress; its call once the metadata is read. */
  let session: { call?: ClientDuplexStream<object, Response> } | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const ended = (ending: object, reason: string, error?: Error): void => {
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
    const opening: { call?: ClientDuplexStream<object, Response> } = {};
    session = opening;
    let metadata: Metadata;
    try {
      metadata = options.metadata ? await options.metadata() : new Metadata();
    } catch (error) {
      return ended(opening, `no call metadata: ${errorMessage(error)}`, error instanceof Error ? error : new Error(errorMessage(error)));
    }
    if (closed || session !== opening) return;
    const call = channel.open<Response>(options.flavour, metadata);
    opening.call = call;
    call.on('data', (response: Response) => {
      if (session !== opening) return;
      backoffMs = firstMs;
      options.onResponse(response);
    });
    call.on('error', (error: Error) => ended(opening, error.message, error));
    call.on('end', () => ended(opening, 'stream ended'));
    options.onOpen();
  };

  return {
    start: () => void open(),
    write(request) {
      const call = session?.call;
      if (!call) return false;
      call.write(request);
      return true;
    },
    isOpen: () => session?.call !== undefined,
    unmanaged: <R>(flavour: StreamFlavour, metadata?: Metadata) => channel.open<R>(flavour, metadata ?? new Metadata()),
    close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      session?.call?.cancel();
      channel.close();
    },
  };
}
