import { newDeltaDiscoveryClient, newDiscoveryClient, isWildcardType, type DiscoveryConnectionOptions } from '../xds/envoy/index.js';
import { keyResources, type ResourceMap } from './config-state.js';
import { MeshError } from '../runtime/index.js';

/** One response of the ADS stream, whichever its flavour, as the data plane takes it. */
export interface AdsUpdate {
  readonly typeUrl: string;
  /** `version_info`, or a delta response's `system_version_info`. */
  readonly version: string;
  /** The state of the world of a wildcard type: the resources replace those held. Otherwise they are merged, and `removed` dropped. */
  readonly complete: boolean;
  /** The resources by name, decoded, and the names removed; throws when a resource cannot be taken (a NACK). */
  read(): { resources: ResourceMap; removed: readonly string[] };
  ack(): void;
  nack(message: string): void;
}

export interface AdsFeedOptions extends DiscoveryConnectionOptions {
  /** DELTA_GRPC (the bootstrap's `ads_config.api_type`); state of the world otherwise. */
  delta: boolean;
  /** The first subscriptions, in order. */
  initial: readonly (readonly [typeUrl: string, names: readonly string[]])[];
  onUpdate: (update: AdsUpdate) => void;
}

/** The data plane's ADS stream in either flavour: responses as updates, subscriptions by type. */
export interface AdsFeed {
  start(): void;
  /** The type's names ([] on CDS and LDS is the wildcard); only a change is sent. */
  subscribe(typeUrl: string, names: readonly string[]): void;
  close(): void;
}

export function newAdsFeed(options: AdsFeedOptions): AdsFeed {
  const { delta, initial, onUpdate, ...connection } = options;
  if (delta) {
    const client = newDeltaDiscoveryClient({
      ...connection,
      initial,
      onResponse(response) {
        onUpdate({
          typeUrl: response.type_url,
          version: response.system_version_info,
          complete: false,
          read() {
            const { resources, removed } = client.decode(response);
            const keyed = keyResources(
              response.type_url,
              resources.map((resource) => resource.resource),
            );
            // The resource's own name must be the one it travels under: removals and versions go by the latter.
            for (const { name } of resources)
              if (!keyed.has(name)) throw new MeshError('config-rejected', `resource ${name}: the message inside names another resource`);
            return { resources: keyed, removed };
          },
          ack: () => client.ack(response),
          nack: (message) => client.nack(response, message),
        });
      },
    });
    return { start: () => client.start(), subscribe: (typeUrl, names) => client.subscribe(typeUrl, names), close: () => client.close() };
  }
  const client = newDiscoveryClient({
    ...connection,
    initial,
    onResponse(response) {
      onUpdate({
        typeUrl: response.type_url,
        version: response.version_info,
        complete: isWildcardType(response.type_url),
        read: () => ({ resources: keyResources(response.type_url, client.decode(response)), removed: [] }),
        ack: () => client.ack(response),
        nack: (message) => client.nack(response, message),
      });
    },
  });
  return { start: () => client.start(), subscribe: (typeUrl, names) => client.subscribe(typeUrl, names), close: () => client.close() };
}
