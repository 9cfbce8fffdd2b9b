import {
  ChannelCredentials,
  Client,
  credentials,
  Metadata,
  status as GrpcStatus,
  type MethodDefinition,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import type { SecureContext } from 'node:tls';
import type { CheckRequestMessage, CheckResponseMessage, ExtAuthzGrpcAnswer, ExtAuthzGrpcCall } from './decisions/index.js';
import type { SecretSet } from './sds-subscriber.js';
import { upstreamTlsOptions, type SecureContextCache, type UpstreamTarget } from './upstream-connector.js';
import { recentEntry } from './recent-map.js';

/** Clients kept for distinct endpoints and TLS settings; the least recently used beyond this are closed. */
const MAX_CLIENTS = 32;

export interface GrpcAuthorizerClients {
  /** One `Authorization/Check` call to an endpoint, over the cluster's TLS (plain, or mutual TLS with the workload certificate). */
  check(target: UpstreamTarget, call: ExtAuthzGrpcCall, secrets: SecretSet): Promise<ExtAuthzGrpcAnswer>;
  close(): void;
}

function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

function answerOf(error: ServiceError, timeoutMs: number): ExtAuthzGrpcAnswer {
  if (error.code === GrpcStatus.DEADLINE_EXCEEDED) return { kind: 'failure', reason: 'timeout', detail: `no answer within ${timeoutMs} ms` };
  if (error.code === GrpcStatus.UNAVAILABLE) return { kind: 'failure', reason: 'connect-failure', detail: error.details };
  return { kind: 'failure', reason: 'grpc-status', detail: `${GrpcStatus[error.code] ?? error.code}: ${error.details}` };
}

/**
 * grpc-js clients of `envoy.service.auth.v3.Authorization`, one per endpoint, authority and TLS
 * settings, made on first use. `service` gives the service definition (from the Envoy protos).
 */
export function newGrpcAuthorizerClients(service: () => ServiceDefinition, secureContexts: SecureContextCache): GrpcAuthorizerClients {
  const clients = new Map<string, Client>();
  // Ids of the objects a client was made for (TLS settings live as long as their config; contexts as long as their secrets).
  const ids = new WeakMap<object, number>();
  let nextId = 0;
  const idOf = (value: object): number => {
    let id = ids.get(value);
    if (id === undefined) ids.set(value, (id = ++nextId));
    return id;
  };
  const clientFor = (target: UpstreamTarget, authority: string | undefined, secrets: SecretSet): Client => {
    let channel: ChannelCredentials = credentials.createInsecure();
    let tlsKey = 'plain';
    const options: Record<string, string> = {};
    if (target.tls.kind === 'tls') {
      const tls = upstreamTlsOptions(target.tls, secrets, secureContexts);
      const context = tls.secureContext as SecureContext;
      channel = ChannelCredentials.createFromSecureContext(context, {
        ...(tls.checkServerIdentity ? { checkServerIdentity: tls.checkServerIdentity } : {}),
        rejectUnauthorized: tls.rejectUnauthorized !== false,
      });
      if (tls.servername) options['grpc.ssl_target_name_override'] = tls.servername;
      tlsKey = `${idOf(target.tls)}/${idOf(context)}`;
    }
    if (authority) options['grpc.default_authority'] = authority;
    const key = `${hostPort(target.address, target.port)}|${authority ?? ''}|${tlsKey}`;
    return recentEntry(
      clients,
      key,
      MAX_CLIENTS,
      () => new Client(hostPort(target.address, target.port), channel, options),
      (evicted) => evicted.close(),
    );
  };
  return {
    check(target, call, secrets) {
      const method = service()['Check'] as MethodDefinition<CheckRequestMessage, CheckResponseMessage> | undefined;
      if (!method) return Promise.resolve({ kind: 'failure', reason: 'grpc-status', detail: 'the Authorization service has no Check method' });
      const client = clientFor(target, call.authority, secrets);
      return new Promise((resolve) => {
        client.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          call.request,
          new Metadata(),
          { deadline: call.timeoutMs > 0 ? Date.now() + call.timeoutMs : Infinity },
          (error, response) => {
            if (error) resolve(answerOf(error, call.timeoutMs));
            else resolve({ kind: 'response', response: response ?? {} });
          },
        );
      });
    },
    close() {
      for (const client of clients.values()) client.close();
      clients.clear();
    },
  };
}
