import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Metadata, Server, ServerCredentials, makeGenericClientConstructor, status, type ChannelCredentials, type ChannelOptions, type Client, type ClientDuplexStream, type ServerDuplexStream, type ServiceDefinition } from '@grpc/grpc-js';
import type { Logger, MeshMetrics } from '../../controllers/runtime/index.js';

const ADS_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService';
const identity = (value: Buffer): Buffer => value;

/** The ADS service with the messages left encoded: the proxy forwards bytes, it never decodes them. */
const ADS_BYTES: ServiceDefinition = Object.fromEntries(
  ['StreamAggregatedResources', 'DeltaAggregatedResources'].map((method) => [
    method,
    { path: `${ADS_PATH}/${method}`, requestStream: true, responseStream: true, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
  ]),
);

export interface XdsProxyOptions {
  /** The Unix socket the proxy (Envoy, a proxyless gRPC app) connects to. */
  readonly socketPath: string;
  /** The daemon: `host:port` over TLS with the mesh roots. */
  readonly upstream: string;
  readonly credentials: ChannelCredentials;
  readonly channelOptions?: ChannelOptions;
  /** Per upstream stream: the bearer token. */
  readonly metadata: () => Promise<Metadata>;
  readonly log: Logger;
  readonly metrics?: MeshMetrics<'pilot-agent'>;
}

export interface XdsProxy {
  start(): Promise<void>;
  stop(): Promise<void>;
}

type Downstream = ServerDuplexStream<Buffer, Buffer>;

/**
 * PROXY_XDS_VIA_AGENT: the proxy's ADS streams go through the agent, which adds TLS and the
 * token towards the daemon. Each downstream stream gets its own upstream stream; when the
 * upstream ends, the downstream stream ends with UNAVAILABLE so the proxy subscribes again from
 * scratch. Writes follow the receiver's pace (backpressure both ways), so a push flood cannot
 * pile up in memory.
 */
export function newXdsProxy(options: XdsProxyOptions): XdsProxy {
  const { log } = options;
  const Ctor = makeGenericClientConstructor(ADS_BYTES, 'AggregatedDiscoveryService');
  const client = new Ctor(options.upstream, options.credentials, options.channelOptions ?? {}) as unknown as Client & Record<string, (metadata: Metadata) => ClientDuplexStream<Buffer, Buffer>>;
  const server = new Server();
  const open = new Set<Downstream>();

  const relay = (method: 'StreamAggregatedResources' | 'DeltaAggregatedResources') => (downstream: Downstream): void => {
    open.add(downstream);
    let finished = false;
    let upstream: ClientDuplexStream<Buffer, Buffer> | undefined;
    const end = (code: number, details: string): void => {
      if (finished) return;
      finished = true;
      open.delete(downstream);
      upstream?.cancel();
      // grpc-js ends a server stream with a status when the error is emitted on it.
      downstream.emit('error', { code, details });
    };
    options
      .metadata()
      .then((metadata) => {
        if (finished) return;
        const call = client[method]?.(metadata);
        if (!call) return end(status.INTERNAL, `no method ${method}`);
        upstream = call;
        // Backpressure: a slow reader pauses the other side instead of buffering without bound.
        call.on('data', (message: Buffer) => {
          if (!downstream.write(message)) {
            call.pause();
            downstream.once('drain', () => call.resume());
          }
        });
        call.on('error', (error: Error & { code?: number }) => {
          options.metrics?.counter('meshd_connection_terminations').inc({ type: error.code === status.CANCELLED ? 'cancelled' : 'error' });
          end(status.UNAVAILABLE, `upstream xDS stream ended: ${error.message}`);
        });
        call.on('end', () => end(status.UNAVAILABLE, 'upstream xDS stream ended'));
        downstream.on('data', (message: Buffer) => {
          if (!call.write(message)) {
            downstream.pause();
            call.once('drain', () => downstream.resume());
          }
        });
      })
      .catch((error: Error) => {
        options.metrics?.counter('meshd_connection_failures').inc();
        end(status.UNAVAILABLE, `no credential for the upstream: ${error.message}`);
      });
    downstream.on('end', () => {
      upstream?.end();
    });
    downstream.on('cancelled', () => {
      finished = true;
      open.delete(downstream);
      upstream?.cancel();
    });
    downstream.on('error', () => undefined);
  };

  server.addService(ADS_BYTES, {
    StreamAggregatedResources: relay('StreamAggregatedResources'),
    DeltaAggregatedResources: relay('DeltaAggregatedResources'),
  });

  return {
    async start() {
      await mkdir(dirname(options.socketPath), { recursive: true });
      await rm(options.socketPath, { force: true });
      await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${options.socketPath}`, ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())));
      log.info({ socket: options.socketPath, upstream: options.upstream }, 'xDS proxy listening');
    },
    async stop() {
      for (const downstream of open) downstream.destroy();
      server.forceShutdown();
      client.close();
      await rm(options.socketPath, { force: true });
    },
  };
}
