import { Server, type ChannelOptions, type ServerCredentials } from '@grpc/grpc-js';
import { errorMessage, MeshError, parseListenAddress, shutdownGrpcServer, type Logger, type Runnable } from '../runtime/index.js';

/** The gRPC transport settings of the xDS listeners (flags and settings of the seed). */
export interface GrpcTransportOptions {
  /** --keepaliveInterval. */
  readonly keepaliveIntervalMs: number;
  /** --keepaliveTimeout. */
  readonly keepaliveTimeoutMs: number;
  /** --keepaliveMaxServerConnectionAge; Go's max duration (the default) means unlimited. */
  readonly maxConnectionAgeMs: number;
  /** MESH_GPRC_MAXRECVMSGSIZE. */
  readonly maxRecvMsgSize: number;
  /** MESH_GPRC_MAXSTREAMS. */
  readonly maxStreams: number;
}

/** Node timers overflow past 2^31-1 ms (about 24.8 days): longer ages are unlimited. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** How long a connection past its maximum age may finish its streams, as the reference. */
const CONNECTION_AGE_GRACE_MS = 10_000;

export function grpcServerOptions(options: GrpcTransportOptions): ChannelOptions {
  return {
    'grpc.keepalive_time_ms': Math.min(options.keepaliveIntervalMs, MAX_TIMER_MS),
    'grpc.keepalive_timeout_ms': Math.min(options.keepaliveTimeoutMs, MAX_TIMER_MS),
    'grpc.keepalive_permit_without_calls': 1,
    ...(options.maxConnectionAgeMs > 0 && options.maxConnectionAgeMs < MAX_TIMER_MS
      ? { 'grpc.max_connection_age_ms': options.maxConnectionAgeMs, 'grpc.max_connection_age_grace_ms': CONNECTION_AGE_GRACE_MS }
      : {}),
    'grpc.max_receive_message_length': options.maxRecvMsgSize,
    'grpc.max_concurrent_streams': options.maxStreams,
    'grpc.enable_channelz': 0,
  };
}

export interface GrpcListenerOptions {
  name: string;
  /** Go-style: `:15010`, `127.0.0.1:0`. */
  address: string;
  /** Called at start, so certificate material is read then. */
  credentials: () => ServerCredentials;
  serverOptions: ChannelOptions;
  /** Adds the services to the fresh server. */
  register: (server: Server) => void;
  log: Logger;
  /** How long a graceful shutdown may take before streams are cut; default 5 s. */
  shutdownTimeoutMs?: number;
  /** Resolves when the listener may bind (its certificate exists); it binds at once when absent. */
  waitBeforeBinding?: (signal: AbortSignal) => Promise<void>;
}

export interface GrpcListener extends Runnable {
  readonly group: 'httpServer';
  waitForReady(signal?: AbortSignal): Promise<void>;
  /** The bound port (the real one when asked for port 0); throws before it listens. */
  port(): number;
}

/** A grpc-js server as a Runnable of the manager's first group: ready once bound, closed on abort. */
export function newGrpcListener(options: GrpcListenerOptions): GrpcListener {
  const { host, port } = parseListenAddress(options.address);
  let bound: number | undefined;
  let markReady!: () => void;
  let markFailed!: (error: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    markFailed = reject;
  });
  ready.catch(() => undefined);

  return {
    name: options.name,
    group: 'httpServer',
    async start(signal) {
      if (options.waitBeforeBinding) {
        try {
          await options.waitBeforeBinding(signal);
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
      }
      const server = new Server(options.serverOptions);
      options.register(server);
      const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      try {
        bound = await new Promise<number>((resolve, reject) =>
          server.bindAsync(target, options.credentials(), (error, boundPort) => (error ? reject(error) : resolve(boundPort))),
        );
      } catch (error) {
        server.forceShutdown();
        const failure = new MeshError('listen-failed', `${options.name}: cannot listen on ${target}: ${errorMessage(error)}`, { cause: error });
        markFailed(failure);
        throw failure;
      }
      options.log.info({ server: options.name, address: `${host}:${bound}` }, 'listening');
      markReady();
      try {
        if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      } finally {
        await shutdownGrpcServer(server, options.shutdownTimeoutMs ?? 5000);
        bound = undefined;
        options.log.info({ server: options.name }, 'stopped');
      }
    },
    waitForReady(signal) {
      if (!signal) return ready;
      return Promise.race([
        ready,
        new Promise<void>((_, reject) => {
          if (signal.aborted) reject(signal.reason);
          else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
      ]);
    },
    port() {
      if (bound === undefined) throw new MeshError('not-listening', `${options.name} is not listening`);
      return bound;
    },
  };
}
