import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import type { Logger, MeshMetrics } from '../../runtime/index.js';
import type { EnvoyProtos } from '../../xds/envoy/index.js';
import { SECRET_TYPE } from '../../xds/envoy/index.js';
import type { WorkloadSecrets } from '../secrets/workload-certificates.js';
import { errorMessage } from '../../runtime/index.js';

const SDS_SERVICE = 'envoy.service.secret.v3.SecretDiscoveryService';
export const WORKLOAD_SECRET_NAME = 'default';
export const ROOT_SECRET_NAME = 'ROOTCA';

export interface SdsServerOptions {
  protos: EnvoyProtos;
  /** The Unix socket path (`./var/run/secrets/workload-spiffe-uds/socket`). */
  socketPath: string;
  current: () => WorkloadSecrets | undefined;
  log: Logger;
  metrics?: MeshMetrics<'pilot-agent'>;
}

export interface SdsServer {
  start(): Promise<void>;
  /** Sends the current secrets to every open stream (after a rotation or a root change). */
  push(): void;
  stop(): Promise<void>;
}

type Stream = ServerDuplexStream<Record<string, unknown>, object>;

/**
 * The agent's SDS server on a Unix socket: `default` (the workload key and chain) and `ROOTCA`
 * (the trust bundle), state of the world, one response per request and a push on every change.
 * Key material never reaches the logs.
 */
export function newSdsServer(options: SdsServerOptions): SdsServer {
  const { protos, log } = options;
  const server = new Server();
  const streams = new Map<Stream, { names: string[]; version: string }>();
  let version = 0;

  const secretsFor = (names: readonly string[]): object[] => {
    const secrets = options.current();
    if (!secrets) return [];
    const wanted = names.length > 0 ? names : [WORKLOAD_SECRET_NAME, ROOT_SECRET_NAME];
    return wanted.flatMap((name) => {
      if (name === WORKLOAD_SECRET_NAME) {
        return [
          protos.encodeAny(SECRET_TYPE, {
            name,
            tls_certificate: {
              certificate_chain: { inline_bytes: Buffer.from(secrets.certificateChain) },
              private_key: { inline_bytes: Buffer.from(secrets.privateKey) },
            },
          }),
        ];
      }
      if (name === ROOT_SECRET_NAME) {
        return [protos.encodeAny(SECRET_TYPE, { name, validation_context: { trusted_ca: { inline_bytes: Buffer.from(secrets.roots) } } })];
      }
      return [];
    });
  };

  const send = (stream: Stream, names: string[]): void => {
    const resources = secretsFor(names);
    if (resources.length === 0) return;
    const state = streams.get(stream);
    const sent = String(version);
    if (state) state.version = sent;
    stream.write({ version_info: sent, resources, type_url: SECRET_TYPE, nonce: randomUUID() });
    options.metrics?.counter('total_pushes').inc();
  };

  server.addService(protos.serviceDefinition(SDS_SERVICE), {
    StreamSecrets(stream: Stream) {
      options.metrics?.counter('total_active_connections').inc();
      streams.set(stream, { names: [], version: '' });
      stream.on('data', (request: Record<string, unknown>) => {
        const state = streams.get(stream);
        if (!state) return;
        const names = (request['resource_names'] as string[] | undefined) ?? [];
        const error = request['error_detail'] as { message?: string } | null | undefined;
        if (error?.message) {
          options.metrics?.counter('total_secret_update_failures').inc();
          log.warn({ names, error: error.message }, 'the proxy rejected a secret');
          return;
        }
        const changedNames = names.join('\n') !== state.names.join('\n');
        state.names = names;
        // A request acknowledging the current version needs no answer.
        if (changedNames || request['version_info'] !== String(version) || request['response_nonce'] === '') send(stream, names);
      });
      const close = (): void => void streams.delete(stream);
      stream.on('end', () => {
        close();
        stream.end();
      });
      stream.on('error', close);
      stream.on('cancelled', close);
    },
    DeltaSecrets(stream: Stream) {
      stream.destroy(new Error('delta SDS is not served; use StreamSecrets'));
    },
    FetchSecrets(call: { request: Record<string, unknown> }, callback: (error: Error | null, response?: object) => void) {
      const names = (call.request['resource_names'] as string[] | undefined) ?? [];
      callback(null, { version_info: String(version), resources: secretsFor(names), type_url: SECRET_TYPE });
    },
  });

  return {
    async start() {
      await mkdir(dirname(options.socketPath), { recursive: true });
      await rm(options.socketPath, { force: true });
      await new Promise<void>((resolve, reject) =>
        server.bindAsync(`unix:${options.socketPath}`, ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())),
      );
      log.info({ socket: options.socketPath }, 'SDS server listening');
    },
    push() {
      version++;
      for (const [stream, state] of streams) {
        try {
          send(stream, state.names);
        } catch (error) {
          options.metrics?.counter('total_push_errors').inc();
          log.warn({ error: errorMessage(error) }, 'SDS push failed');
        }
      }
    },
    async stop() {
      for (const stream of streams.keys()) stream.end();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      server.forceShutdown();
      await rm(options.socketPath, { force: true });
    },
  };
}
