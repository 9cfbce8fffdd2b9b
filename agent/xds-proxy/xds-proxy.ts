import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  type Metadata,
  Server,
  ServerCredentials,
  makeGenericClientConstructor,
  status,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientDuplexStream,
  type ServerDuplexStream,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import type { Logger, MeshMetrics } from '../../runtime/index.js';
import { newAgentSubscriptions, type AgentSubscription } from './agent-subscriptions.js';
import type { AgentReports } from './agent-reports.js';
import type { EnvoyProtos } from '../../xds/envoy/index.js';

const ADS_PATH = '/envoy.service.discovery.v3.AggregatedDiscoveryService';
const identity = (value: Buffer): Buffer => value;

/** The ADS service with the messages left encoded: the proxy forwards bytes, it never decodes them. */
const ADS_BYTES: ServiceDefinition = Object.fromEntries(
  ['StreamAggregatedResources', 'DeltaAggregatedResources'].map((method) => [
    method,
    {
      path: `${ADS_PATH}/${method}`,
      requestStream: true,
      responseStream: true,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  ]),
);

/** What a relay does with one downstream request: forward these bytes, or end the stream. */
export type RequestVerdict = { readonly forward: Buffer } | { readonly refuse: string };

export interface XdsProxyOptions {
  /** Where the proxy (Envoy, a proxyless gRPC app, a debug client) connects: `unix:<path>` or `<host>:<port>`. */
  readonly listen: string;
  /** Looks at each downstream request before it goes upstream (the debug tap admits only debug types); all pass unchanged by default. */
  readonly inspectRequest?: (message: Buffer) => RequestVerdict;
  /** The daemon: `host:port` over TLS with the mesh roots. */
  readonly upstream: string;
  readonly credentials: ChannelCredentials;
  readonly channelOptions?: ChannelOptions;
  /** Per upstream stream: the bearer token. */
  readonly metadata: () => Promise<Metadata>;
  readonly log: Logger;
  readonly metrics?: MeshMetrics<'pilot-agent'>;
  /**
   * The agent's own traffic on each proxy stream: types it subscribes to (the DNS name table),
   * answered by the agent and never seen by the proxy; and its reports (health), written upstream
   * as they come and, the last of each type, after each new stream's first request.
   */
  readonly agentSubscriptions?: {
    readonly protos: () => EnvoyProtos;
    readonly subscriptions: readonly AgentSubscription[];
    readonly reports?: AgentReports;
  };
}

export interface XdsProxy {
  /** Listens; resolves the bound port (0 on a Unix socket). */
  start(): Promise<number>;
  stop(): Promise<void>;
}

type Downstream = ServerDuplexStream<Buffer, Buffer>;

/**
 * PROXY_XDS_VIA_AGENT: the proxy's ADS streams go through the agent, which adds TLS and the
 * token towards the daemon. Each downstream stream gets its own upstream stream; when the
 * upstream ends, the downstream stream ends with its status (UNAVAILABLE when it just broke) so
 * the proxy subscribes again from scratch. Writes follow the receiver's pace (backpressure both ways), so a push flood cannot
 * pile up in memory.
 */
export function newXdsProxy(options: XdsProxyOptions): XdsProxy {
  const { log } = options;
  const Ctor = makeGenericClientConstructor(ADS_BYTES, 'AggregatedDiscoveryService');
  const client = new Ctor(options.upstream, options.credentials, options.channelOptions ?? {}) as unknown as Client &
    Record<string, (metadata: Metadata) => ClientDuplexStream<Buffer, Buffer>>;
  const server = new Server();
  const open = new Set<Downstream>();
  const socketPath = options.listen.startsWith('unix:') ? options.listen.slice('unix:'.length) : undefined;

  const relay =
    (method: 'StreamAggregatedResources' | 'DeltaAggregatedResources') =>
    (downstream: Downstream): void => {
      open.add(downstream);
      let finished = false;
      let upstream: ClientDuplexStream<Buffer, Buffer> | undefined;
      const own = options.agentSubscriptions
        ? newAgentSubscriptions(
            options.agentSubscriptions.protos(),
            method === 'StreamAggregatedResources' ? 'sotw' : 'delta',
            options.agentSubscriptions.subscriptions,
            log,
          )
        : undefined;
      let subscribed = false;
      let stopReports: (() => void) | undefined;
      const end = (code: number, details: string): void => {
        if (finished) return;
        finished = true;
        stopReports?.();
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
            const ack = own?.answer(message);
            if (ack !== undefined) {
              if (ack.length > 0) call.write(ack);
              return;
            }
            if (!downstream.write(message)) {
              call.pause();
              downstream.once('drain', () => call.resume());
            }
          });
          call.on('error', (error: Error & { code?: number }) => {
            options.metrics?.counter('meshd_connection_terminations').inc({ type: error.code === status.CANCELLED ? 'cancelled' : 'error' });
            // The daemon's verdict (PERMISSION_DENIED, INVALID_ARGUMENT…) reaches the client as given; a broken stream is UNAVAILABLE.
            const relayed = error.code !== undefined && error.code !== status.OK && error.code !== status.CANCELLED ? error.code : status.UNAVAILABLE;
            end(relayed, `upstream xDS stream ended: ${error.message}`);
          });
          call.on('end', () => end(status.UNAVAILABLE, 'upstream xDS stream ended'));
          downstream.on('data', (message: Buffer) => {
            const verdict = options.inspectRequest?.(message) ?? { forward: message };
            if ('refuse' in verdict) return end(status.INVALID_ARGUMENT, verdict.refuse);
            const paused = !call.write(verdict.forward);
            // After the proxy's first request (it carries the node), the agent's own subscriptions and its last reports.
            if (own && !subscribed) {
              subscribed = true;
              for (const request of own.requests()) call.write(request);
              const reports = options.agentSubscriptions?.reports;
              if (reports) {
                for (const report of reports.latest()) call.write(own.report(report));
                stopReports = reports.listen((report) => {
                  if (!finished) call.write(own.report(report));
                });
              }
            }
            if (paused) {
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
        stopReports?.();
        upstream?.end();
      });
      downstream.on('cancelled', () => {
        finished = true;
        stopReports?.();
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
      if (socketPath) {
        await mkdir(dirname(socketPath), { recursive: true });
        await rm(socketPath, { force: true });
      }
      const port = await new Promise<number>((resolve, reject) =>
        server.bindAsync(options.listen, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
      );
      log.info({ listen: options.listen, upstream: options.upstream }, 'xDS proxy listening');
      return port;
    },
    async stop() {
      for (const downstream of open) downstream.destroy();
      server.forceShutdown();
      client.close();
      if (socketPath) await rm(socketPath, { force: true });
    },
  };
}
