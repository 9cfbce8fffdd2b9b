import type { EncodedAny } from './encoded-any.js';
import { newManagedStream, type DiscoveryConnectionOptions } from './discovery-stream.js';
import { isWildcardType } from './type-urls.js';
import { MeshError } from '../../runtime/index.js';

/** A DeltaDiscoveryRequest as the client writes it. */
export interface DeltaDiscoveryRequest {
  node?: object;
  type_url: string;
  resource_names_subscribe?: readonly string[];
  resource_names_unsubscribe?: readonly string[];
  initial_resource_versions?: Readonly<Record<string, string>>;
  response_nonce?: string;
  error_detail?: { code: number; message: string };
}

/** One resource of a delta response: its name, its version, the message still encoded. */
export interface DeltaResource {
  name: string;
  version: string;
  resource?: EncodedAny | null;
}

/** A DeltaDiscoveryResponse as the caller gets it. */
export interface DeltaDiscoveryResponse {
  system_version_info: string;
  type_url: string;
  nonce: string;
  resources: DeltaResource[];
  removed_resources: string[];
  /** The encoded size (`raw` clients only). */
  bytes?: number;
}

export interface DecodedDeltaResource {
  name: string;
  version: string;
  resource: Record<string, unknown>;
}

export interface DeltaDiscoveryClientOptions extends DiscoveryConnectionOptions {
  /** The first subscriptions, in order ([] on CDS and LDS is the wildcard). */
  initial?: readonly (readonly [typeUrl: string, names: readonly string[]])[];
  /** Every response of the managed stream; the caller answers with `ack` or `nack` (or not at all). */
  onResponse?: (response: DeltaDiscoveryResponse) => void;
  /**
   * Hold the versions of the accepted resources, announced when the stream is reopened (default).
   * False spares load generators whose streams are never reopened the memory of thousands of them.
   */
  holdVersions?: boolean;
}

export interface DeltaDiscoveryClient {
  /** Opens the managed stream. */
  start(): void;
  /**
   * Sets the type's subscription ([] or `*` on CDS and LDS is the wildcard). The open stream is
   * sent only the names added and removed; a reopened stream the whole subscription, in the order
   * the types were first subscribed, with the versions held.
   */
  subscribe(typeUrl: string, names: readonly string[]): void;
  /** Accepts a response: its resources' versions are held, its removals forgotten. */
  ack(response: DeltaDiscoveryResponse): void;
  /** Rejects a response (error_detail INVALID_ARGUMENT): the versions held stay as they were. */
  nack(response: DeltaDiscoveryResponse, message: string): void;
  /**
   * The response's resources of subscribed names as plain objects (others are left out, as Envoy
   * ignores them), and its removals. Throws on a resource without a body, of another type, or
   * that the protos cannot decode.
   */
  decode(response: DeltaDiscoveryResponse): { resources: DecodedDeltaResource[]; removed: string[] };
  /** The versions held of a type: what a reopened stream sends as `initial_resource_versions`. */
  versions(typeUrl: string): ReadonlyMap<string, string>;
  /** Ends the managed stream and the channel. */
  close(): void;
}

interface Subscription {
  wildcard: boolean;
  names: ReadonlySet<string>;
}

const NOTHING: Subscription = { wildcard: false, names: new Set() };

function subscriptionOf(typeUrl: string, names: readonly string[]): Subscription {
  const explicit = new Set(names);
  const star = explicit.delete('*');
  return { wildcard: isWildcardType(typeUrl) && (star || names.length === 0), names: explicit };
}

const minus = (a: ReadonlySet<string>, b: ReadonlySet<string>): string[] => [...a].filter((name) => !b.has(name));

/**
 * The delta flavour of the xDS client (DeltaAggregatedResources, as Envoy's `DELTA_GRPC`): the
 * subscription per type is kept and sent as changes, the versions of the accepted resources are
 * held across reconnects and announced in `initial_resource_versions` (so that a reopened stream
 * receives only what changed), and responses are ACKed or NACKed by nonce as the caller decides.
 * Stream lifecycle and backoff are the state-of-the-world client's (discovery-stream.ts).
 */
export function newDeltaDiscoveryClient(options: DeltaDiscoveryClientOptions): DeltaDiscoveryClient {
  const { protos } = options;
  /** What the caller wants, by type, in the order first subscribed. */
  const wanted = new Map<string, Subscription>();
  /** The versions of accepted resources, by type then name: kept across streams. */
  const held = new Map<string, Map<string, string>>();
  /** What the open stream was told, by type. */
  let told = new Map<string, Subscription>();
  let nodeSent = false;

  const heldOf = (typeUrl: string): Map<string, string> => {
    let versions = held.get(typeUrl);
    if (!versions) held.set(typeUrl, (versions = new Map()));
    return versions;
  };

  const write = (request: DeltaDiscoveryRequest): void => {
    const withNode = !nodeSent && options.node ? { node: options.node, ...request } : request;
    if (stream.write(withNode)) nodeSent = true;
  };

  /** The first request of a type on this stream: the whole subscription and the versions held. */
  const announce = (typeUrl: string, subscription: Subscription): void => {
    if (!subscription.wildcard && subscription.names.size === 0) return;
    const names = [...subscription.names];
    const versions = heldOf(typeUrl);
    write({
      type_url: typeUrl,
      // Envoy's legacy wildcard: a first request naming nothing.
      resource_names_subscribe: subscription.wildcard && names.length > 0 ? ['*', ...names] : names,
      ...(versions.size > 0 ? { initial_resource_versions: Object.fromEntries(versions) } : {}),
    });
    told.set(typeUrl, subscription);
  };

  const update = (typeUrl: string, subscription: Subscription): void => {
    if (!stream.isOpen()) return;
    const before = told.get(typeUrl);
    if (!before) return announce(typeUrl, subscription);
    const subscribe = minus(subscription.names, before.names);
    const unsubscribe = minus(before.names, subscription.names);
    if (subscription.wildcard && !before.wildcard) subscribe.push('*');
    if (!subscription.wildcard && before.wildcard) unsubscribe.push('*');
    if (subscribe.length === 0 && unsubscribe.length === 0) return;
    write({ type_url: typeUrl, resource_names_subscribe: subscribe, resource_names_unsubscribe: unsubscribe });
    told.set(typeUrl, subscription);
  };

  const isWanted = (typeUrl: string, name: string): boolean => {
    const subscription = wanted.get(typeUrl) ?? NOTHING;
    return subscription.wildcard || subscription.names.has(name);
  };

  const stream = newManagedStream<DeltaDiscoveryResponse>({
    ...options,
    flavour: 'delta',
    onOpen() {
      told = new Map();
      nodeSent = false;
      for (const [typeUrl, subscription] of wanted) announce(typeUrl, subscription);
    },
    onResponse: (response) => options.onResponse?.(response),
  });

  const subscribe = (typeUrl: string, names: readonly string[]): void => {
    const subscription = subscriptionOf(typeUrl, names);
    const before = wanted.get(typeUrl);
    wanted.set(typeUrl, subscription);
    // Versions of names no longer wanted are forgotten: a reopened stream must not announce them.
    if (before && !subscription.wildcard) {
      const versions = heldOf(typeUrl);
      for (const name of [...versions.keys()]) if (!subscription.names.has(name)) versions.delete(name);
    }
    update(typeUrl, subscription);
  };
  for (const [typeUrl, names] of options.initial ?? []) wanted.set(typeUrl, subscriptionOf(typeUrl, names));

  return {
    start: () => stream.start(),
    subscribe,
    ack(response) {
      if (options.holdVersions ?? true) {
        const versions = heldOf(response.type_url);
        for (const resource of response.resources) if (isWanted(response.type_url, resource.name)) versions.set(resource.name, resource.version);
        for (const name of response.removed_resources) versions.delete(name);
      }
      write({ type_url: response.type_url, response_nonce: response.nonce });
    },
    nack(response, message) {
      write({ type_url: response.type_url, response_nonce: response.nonce, error_detail: { code: 3, message } });
    },
    decode(response) {
      const resources: DecodedDeltaResource[] = [];
      for (const { name, version, resource } of response.resources) {
        if (!isWanted(response.type_url, name)) continue;
        if (!resource) throw new MeshError('invalid-xds-resource', `resource ${name} has no body`);
        if (resource.type_url !== response.type_url)
          throw new MeshError('invalid-xds-resource', `resource ${name} is a ${resource.type_url}, not a ${response.type_url}`);
        resources.push({ name, version, resource: protos.decodeAny(resource) });
      }
      return { resources, removed: [...response.removed_resources] };
    },
    versions: (typeUrl) => heldOf(typeUrl),
    close: () => stream.close(),
  };
}
