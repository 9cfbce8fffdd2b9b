/**
 * Helpers for the xDS tests: a small mutable "world" with generators returning real Envoy
 * messages, raw ADS streams of the discovery client, and metric readers. Not
 * exported from index.ts.
 */
import { credentials, type ClientDuplexStream, type Metadata, type StatusObject } from '@grpc/grpc-js';
import { newMetrics, newNopLogger, type Logger, type MeshMetrics } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import type { EnvoyProtos } from '../envoy/envoy-protos.js';
import { newDiscoveryClient } from '../envoy/discovery-client.js';
import type { GenerateRequest, Generator, NamedResource } from '../generator.js';
import { pushRequestOf, type ConfigKey, type PushChange } from '../push/push-request.js';
import { jsonToStruct, type JsonValue } from '../envoy/struct-json.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, SECRET_TYPE } from '../envoy/type-urls.js';
import { newXdsServer, type XdsServer, type XdsServerOptions } from '../xds-server.js';
import type { XdsAuthPolicy } from '../ads-service.js';
import type { DiscoveryServer, XdsTuning } from '../discovery-server.js';
import { waitFor } from '../../testing/wait-for.js';

export interface Backend {
  address: string;
  port: number;
}

/** The test model: services with endpoints, and listeners routing to them. */
export interface World {
  /** Cluster name → endpoints (EDS cluster per entry). */
  clusters: Record<string, Backend[]>;
  /** Listener name (a gRPC target `host:port`) → cluster it routes to. */
  listeners: Record<string, string>;
  /** Secret name → PEM pair. */
  secrets: Record<string, { cert: string; key: string }>;
  /** A cluster whose generation throws (a generator bug). */
  brokenCluster?: string;
  /** Building the push context throws. */
  failPushContext?: boolean;
}

export type WorldSnapshot = Readonly<World>;

export function newWorld(): World {
  return { clusters: {}, listeners: {}, secrets: {} };
}

export function serviceKey(cluster: string): ConfigKey {
  return { kind: 'Service', namespace: 'default', name: cluster };
}

export function buildWorldSnapshot(world: World): WorldSnapshot {
  return structuredClone(world);
}

/** Counts calls per type, so that tests can tell what was generated. */
export type GenerateCalls = Record<string, GenerateRequest[]>;

function selected(all: readonly string[], request: GenerateRequest): string[] {
  return request.names.length === 0 ? [...all] : all.filter((name) => request.names.includes(name));
}

/** CDS, EDS, LDS, RDS and SDS generators over the world, as a proxyless gRPC client consumes them. */
export function worldGenerators(calls: GenerateCalls = {}): Generator<WorldSnapshot>[] {
  const record = (typeUrl: string, request: GenerateRequest): void => {
    (calls[typeUrl] ??= []).push(request);
  };
  return [
    {
      typeUrl: CLUSTER_TYPE,
      generate(_proxy, world, request) {
        record(CLUSTER_TYPE, request);
        return {
          resources: selected(Object.keys(world.clusters).sort(), request).map((name): NamedResource => ({
            name,
            cacheKey: `cluster/${name}`,
            dependsOn: [serviceKey(name)],
            resource: () => {
              if (name === world.brokenCluster) throw new Error(`cannot build cluster ${name}`);
              return {
                name,
                type: 'EDS',
                eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' }, service_name: name },
                connect_timeout: { seconds: 1 },
                lb_policy: 'ROUND_ROBIN',
              };
            },
          })),
        };
      },
    },
    {
      typeUrl: ENDPOINT_TYPE,
      generate(_proxy, world, request) {
        record(ENDPOINT_TYPE, request);
        let names = request.names.filter((name) => name in world.clusters);
        if (!request.full && request.configsUpdated.length > 0) {
          const changed = new Set(request.configsUpdated.map((key) => key.name));
          names = names.filter((name) => changed.has(name));
          if (names.length === 0) return undefined;
        }
        return {
          resources: names.map((name) => ({
            name,
            cacheKey: `endpoints/${name}`,
            dependsOn: [serviceKey(name)],
            resource: {
              cluster_name: name,
              endpoints: [
                {
                  locality: { region: 'region-1', zone: 'zone-1' },
                  load_balancing_weight: { value: 1 },
                  lb_endpoints: (world.clusters[name] ?? []).map((backend) => ({
                    endpoint: { address: { socket_address: { address: backend.address, port_value: backend.port } } },
                    load_balancing_weight: { value: 1 },
                  })),
                },
              ],
            },
          })),
        };
      },
    },
    {
      typeUrl: LISTENER_TYPE,
      generate(_proxy, world, request) {
        record(LISTENER_TYPE, request);
        return {
          resources: selected(Object.keys(world.listeners).sort(), request).map((name) => ({
            name,
            resource: {
              name,
              api_listener: {
                api_listener: {
                  '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                  stat_prefix: name,
                  rds: { route_config_name: `route/${name}`, config_source: { ads: {}, resource_api_version: 'V3' } },
                  http_filters: [
                    { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } },
                  ],
                },
              },
            },
          })),
        };
      },
    },
    {
      typeUrl: ROUTE_TYPE,
      generate(_proxy, world, request) {
        record(ROUTE_TYPE, request);
        const routes = Object.entries(world.listeners).map(([listener, cluster]) => ({ name: `route/${listener}`, listener, cluster }));
        return {
          resources: routes
            .filter((route) => request.names.length === 0 || request.names.includes(route.name))
            .map((route) => ({
              name: route.name,
              resource: {
                name: route.name,
                virtual_hosts: [
                  {
                    name: route.listener,
                    domains: [route.listener, route.listener.split(':')[0] ?? route.listener],
                    routes: [{ match: { prefix: '' }, route: { cluster: route.cluster } }],
                  },
                ],
              },
            })),
        };
      },
    },
    {
      typeUrl: SECRET_TYPE,
      generate(_proxy, world, request) {
        record(SECRET_TYPE, request);
        return {
          resources: request.names.map((name) => {
            const pair = world.secrets[name] ?? { cert: `cert of ${name}`, key: `-----BEGIN PRIVATE KEY-----\n${name}\n-----END PRIVATE KEY-----\n` };
            return {
              name,
              resource: {
                name,
                tls_certificate: { certificate_chain: { inline_string: pair.cert }, private_key: { inline_string: pair.key } },
              },
            };
          }),
        };
      },
    },
  ];
}

export const DEFAULT_TUNING: XdsTuning = {
  debounceAfterMs: 100,
  debounceMaxMs: 10_000,
  enableEdsDebounce: true,
  pushThrottle: 10,
  enableCache: true,
  cacheSize: 100,
  sendTimeoutMs: 0,
  cacheStats: true,
};

export interface TestXds {
  xds: XdsServer<WorldSnapshot>;
  discovery: DiscoveryServer<WorldSnapshot>;
  world: World;
  clock: FakeClock;
  metrics: MeshMetrics<'pilot-discovery'>;
  calls: GenerateCalls;
  port: number;
  /** Sets the model's readiness. */
  ready: { value: boolean };
  /** Triggers a push and lets the fake clock run the debounce. */
  push(request?: Partial<PushChange>): void;
  /** Pushes and waits until the new push context is in effect. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An auth policy under which every stream, plain text included, is a caller of the system
 * namespace: tests that read debug views (syncz as a barrier) on their own streams use it.
 */
export const SYSTEM_CALLERS: XdsAuthPolicy = {
  authenticators: [{ name: 'test-system', authenticate: async () => ({ identities: ['spiffe://cluster.local/ns/mesh-system/sa/meshctl'] }) }],
  xdsAuth: true,
  xdsAuthPlaintext: true,
  identityCheck: false,
};

export async function startTestXds(
  protos: EnvoyProtos,
  overrides: Partial<Omit<XdsServerOptions<WorldSnapshot>, 'tuning'>> & { tuning?: Partial<XdsTuning>; log?: Logger } = {},
): Promise<TestXds> {
  const world = newWorld();
  const clock = new FakeClock();
  const metrics = newMetrics('pilot-discovery');
  const calls: GenerateCalls = {};
  const ready = { value: true };
  const { tuning, ...rest } = overrides;
  const effective: XdsTuning = { ...DEFAULT_TUNING, ...tuning };
  const xds = newXdsServer<WorldSnapshot>({
    protos,
    generators: worldGenerators(calls),
    buildPushContext: () => {
      if (world.failPushContext) throw new Error('the model is inconsistent');
      return buildWorldSnapshot(world);
    },
    isReady: () => ready.value,
    tuning: effective,
    transport: { keepaliveIntervalMs: 30_000, keepaliveTimeoutMs: 10_000, maxConnectionAgeMs: 2 ** 53, maxRecvMsgSize: 4 * 1024 * 1024, maxStreams: 1000 },
    grpcAddr: '127.0.0.1:0',
    clock,
    metrics,
    log: newNopLogger('ads'),
    shutdownTimeoutMs: 1000,
    // The fake clock never moves by itself: tests that want the admission rate set it.
    newStreamsPerSecond: 0,
    ...rest,
  });
  const controller = new AbortController();
  const running = xds.runnables.map((runnable) => runnable.start(controller.signal));
  await xds.plaintext.waitForReady();
  return {
    xds,
    discovery: xds.discovery,
    world,
    clock,
    metrics,
    calls,
    port: xds.plaintext.port(),
    ready,
    push(request = {}) {
      xds.configUpdate(pushRequestOf({ full: true, configsUpdated: [], reason: 'config', startedAt: clock.now(), ...request }));
      clock.advance(effective.debounceAfterMs);
    },
    async sync() {
      const before = xds.discovery.lastPush();
      xds.configUpdate(pushRequestOf({ full: true, configsUpdated: [], reason: 'unknown', startedAt: clock.now() }));
      clock.advance(effective.debounceAfterMs);
      await waitFor(() => xds.discovery.lastPush() !== before, { description: 'push context built' });
    },
    async close() {
      controller.abort();
      await Promise.allSettled(running);
    },
  };
}

/** A DiscoveryRequest or DeltaDiscoveryRequest as a plain object. */
export type RequestMessage = Record<string, unknown>;

export interface ResponseMessage {
  version_info?: string;
  system_version_info?: string;
  type_url: string;
  nonce: string;
  resources: Array<{ type_url?: string; value?: Buffer; name?: string; version?: string; resource?: { type_url: string; value: Buffer } }>;
  removed_resources?: string[];
  control_plane?: { identifier: string } | null;
}

export function nodeFor(pod: string, namespace: string, metadata: Record<string, JsonValue> = {}, type = 'sidecar'): object {
  return {
    id: `${type}~10.0.0.1~${pod}.${namespace}~${namespace}.svc.cluster.local`,
    metadata: jsonToStruct({ NAMESPACE: namespace, MESH_VERSION: '1.0.0', ...metadata }),
    locality: { region: 'region-1', zone: 'zone-1' },
  };
}

/** One raw ADS stream: send requests, await responses (with a timeout), await the final status. */
export class AdsTestStream {
  private readonly responses: ResponseMessage[] = [];
  private readonly waiting: Array<(response: ResponseMessage) => void> = [];
  readonly status: Promise<StatusObject>;
  readonly call: ClientDuplexStream<RequestMessage, ResponseMessage>;

  constructor(call: ClientDuplexStream<RequestMessage, ResponseMessage>) {
    this.call = call;
    call.on('data', (response: ResponseMessage) => {
      const waiter = this.waiting.shift();
      if (waiter) waiter(response);
      else this.responses.push(response);
    });
    this.status = new Promise((resolve) => call.on('status', resolve));
    call.on('error', () => undefined);
  }

  send(request: RequestMessage): void {
    this.call.write(request);
  }

  next(timeoutMs = 3000): Promise<ResponseMessage> {
    const queued = this.responses.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no response within ${timeoutMs}ms`)), timeoutMs);
      this.waiting.push((response) => {
        clearTimeout(timer);
        resolve(response);
      });
    });
  }

  /** Responses received and not yet taken. */
  buffered(): number {
    return this.responses.length;
  }

  close(): void {
    this.call.end();
  }

  cancel(): void {
    this.call.cancel();
  }
}

export interface AdsTestClient {
  sotw(metadata?: Metadata): AdsTestStream;
  delta(metadata?: Metadata): AdsTestStream;
  close(): void;
}

export function newAdsTestClient(protos: EnvoyProtos, port: number, host = '127.0.0.1'): AdsTestClient {
  const client = newDiscoveryClient({ protos, target: `${host}:${port}`, credentials: credentials.createInsecure() });
  return {
    sotw: (metadata) => new AdsTestStream(client.stream<ResponseMessage>(metadata ? { metadata } : {})),
    delta: (metadata) => new AdsTestStream(client.stream<ResponseMessage>({ delta: true, ...(metadata ? { metadata } : {}) })),
    close: () => client.close(),
  };
}

/** The value of a counter or gauge (summed over label sets matching `labels`). */
export async function metricValue(metrics: MeshMetrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  return values
    .filter((value) => Object.entries(labels).every(([key, expected]) => String((value.labels as Record<string, unknown>)[key]) === expected))
    .reduce((sum, value) => sum + value.value, 0);
}

/** The number of observations of a histogram. */
export async function histogramCount(metrics: MeshMetrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  return values
    .filter((value) => (value as { metricName?: string }).metricName === `${name}_count`)
    .filter((value) => Object.entries(labels).every(([key, expected]) => String((value.labels as Record<string, unknown>)[key]) === expected))
    .reduce((sum, value) => sum + value.value, 0);
}
