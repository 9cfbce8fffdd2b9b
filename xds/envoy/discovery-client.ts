import type { ClientDuplexStream, Metadata } from '@grpc/grpc-js';
import type { EncodedAny } from './encoded-any.js';
import { newManagedStream, type DiscoveryConnectionOptions } from './discovery-stream.js';

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

export interface DiscoveryClientOptions extends DiscoveryConnectionOptions {
  /** ACKs and NACKs carry the node too (default); false leaves it to the subscribing requests. */
  nodeOnAcks?: boolean;
  /** The subscriptions sent, in order, whenever a stream opens. */
  initial?: readonly (readonly [typeUrl: string, names: readonly string[]])[];
  /** Every response of the managed stream; the caller answers with `ack` or `nack` (or not at all). */
  onResponse?: (response: DiscoveryResponse) => void;
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

/**
 * One xDS client over grpc-js, state of the world: the managed stream subscribes, tracks each
 * type's accepted version (kept across reconnects) and the stream's nonces, and ACKs or NACKs as
 * the caller decides; `stream` opens unmanaged ones for tests. The delta flavour is
 * delta-discovery-client.ts.
 */
export function newDiscoveryClient(options: DiscoveryClientOptions): DiscoveryClient {
  const { protos } = options;
  const versions = new Map<string, string>();
  /** Subscribed names and last nonces by type, for the open stream only. */
  let names = new Map<string, readonly string[]>();
  let nonces = new Map<string, string>();

  const write = (typeUrl: string, nonce: string, extra?: Pick<DiscoveryRequest, 'error_detail'>, withNode = true): void => {
    const request: DiscoveryRequest = {
      ...(withNode && options.node ? { node: options.node } : {}),
      type_url: typeUrl,
      resource_names: names.get(typeUrl) ?? [],
      version_info: versions.get(typeUrl) ?? '',
      response_nonce: nonce,
      ...extra,
    };
    stream.write(request);
  };

  const request = (typeUrl: string, subscribed: readonly string[]): void => {
    if (!stream.isOpen()) return;
    // Kept immutable: every ACK repeats the list (a frozen one is taken as it is, anything else copied).
    names.set(typeUrl, Object.isFrozen(subscribed) ? subscribed : Object.freeze([...subscribed]));
    write(typeUrl, nonces.get(typeUrl) ?? '');
  };

  const stream = newManagedStream<DiscoveryResponse>({
    ...options,
    flavour: 'sotw',
    onOpen() {
      names = new Map();
      nonces = new Map();
      for (const [typeUrl, subscribed] of options.initial ?? []) request(typeUrl, subscribed);
    },
    onResponse(response) {
      nonces.set(response.type_url, response.nonce);
      options.onResponse?.(response);
    },
  });

  return {
    start: () => stream.start(),
    subscribe(typeUrl, subscribed) {
      const before = names.get(typeUrl);
      if (!before || before.join('\n') !== subscribed.join('\n')) request(typeUrl, subscribed);
    },
    ack(response) {
      versions.set(response.type_url, response.version_info);
      write(response.type_url, response.nonce, undefined, options.nodeOnAcks ?? true);
    },
    nack(response, message) {
      write(response.type_url, response.nonce, { error_detail: { code: 3, message } }, options.nodeOnAcks ?? true);
    },
    decode: (response) => response.resources.map((any) => protos.decodeAny(any)),
    stream: <Response>(streamOptions: { delta?: boolean; metadata?: Metadata } = {}) =>
      stream.unmanaged<Response>(streamOptions.delta ? 'delta' : 'sotw', streamOptions.metadata),
    close: () => stream.close(),
  };
}
