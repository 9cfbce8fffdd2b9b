/**
 * Test support: a gRPC authorization server, `envoy.service.auth.v3.Authorization` on grpc-js,
 * its service loaded with @grpc/proto-loader straight from Envoy's proto files (the ones
 * grpc-js-xds ships), not through the mesh's own proto code: the data plane's client is checked
 * against an independent reading of the protos.
 */
import { loadPackageDefinition, Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoIncludeDirs } from '../../xds/envoy/index.js';
import { newAuthorizerState, type AuthorizerAnswer, type AuthorizerBehaviour, type TestAuthorizer } from './authorizer-behaviour.js';

/** A CheckRequest as proto-loader decodes it (snake_case, enums by name, int64 as text, defaults filled). */
export interface RecordedGrpcCheck {
  readonly attributes: {
    readonly source: {
      readonly address: { readonly socket_address: { readonly address: string; readonly port_value: number } } | null;
      readonly principal: string;
    };
    readonly destination: {
      readonly address: { readonly socket_address: { readonly address: string; readonly port_value: number } } | null;
      readonly principal: string;
    };
    readonly request: {
      readonly time: { readonly seconds: string; readonly nanos: number } | null;
      readonly http: {
        readonly id: string;
        readonly method: string;
        readonly headers: Readonly<Record<string, string>>;
        readonly path: string;
        readonly host: string;
        readonly scheme: string;
        readonly protocol: string;
        readonly size: string;
        readonly body: string;
        readonly raw_body: Buffer;
        readonly query: string;
      } | null;
    } | null;
  };
}

export type GrpcAuthorizer = TestAuthorizer<RecordedGrpcCheck> & {
  /** The `:authority` of each call, oldest first. */
  authorities(): readonly string[];
};

/** `envoy.service.auth.v3.Authorization` from Envoy's own proto files. */
function authorizationService(): ServiceDefinition {
  const definition = loadSync('envoy/service/auth/v3/external_auth.proto', {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
    includeDirs: protoIncludeDirs(),
  });
  const loaded = loadPackageDefinition(definition) as unknown as { envoy: { service: { auth: { v3: { Authorization: { service: ServiceDefinition } } } } } };
  return loaded.envoy.service.auth.v3.Authorization.service;
}

const headerOptions = (headers: Readonly<Record<string, string>> | undefined, append: boolean): object[] =>
  Object.entries(headers ?? {}).map(([key, value]) => ({ header: { key, value }, append: { value: append } }));

function checkResponse(answer: Exclude<AuthorizerAnswer, { kind: 'error' | 'hang-up' }>): object {
  if (answer.kind === 'allow') {
    return {
      status: { code: status.OK },
      ok_response: {
        headers: headerOptions(answer.upstreamHeaders, false),
        headers_to_remove: [...(answer.removeHeaders ?? [])],
        response_headers_to_add: headerOptions(answer.clientHeaders, true),
      },
    };
  }
  return {
    status: { code: status.PERMISSION_DENIED },
    denied_response: {
      ...(answer.status !== undefined ? { status: { code: answer.status } } : {}),
      headers: headerOptions(answer.headers, false),
      body: answer.body ?? '',
    },
  };
}

export async function startGrpcAuthorizer(options: { readonly host: string }): Promise<GrpcAuthorizer> {
  const state = newAuthorizerState<RecordedGrpcCheck>();
  const authorities: string[] = [];
  let calls = 0;
  const server = new Server();
  server.addService(authorizationService(), {
    Check: (call: ServerUnaryCall<RecordedGrpcCheck, object>, callback: sendUnaryData<object>) => {
      calls++;
      state.received.push(call.request);
      authorities.push(call.getHost());
      const behaviour = state.behaviour;
      void state.delay(behaviour.delayMs).then((answered) => {
        if (!answered) return callback({ code: status.CANCELLED, details: 'the authorizer closed' });
        const { answer } = behaviour;
        if (answer.kind === 'error') return callback({ code: status.UNAVAILABLE, details: 'the authorizer failed' });
        // Every connection dropped mid-call, as a server that goes away.
        if (answer.kind === 'hang-up') return server.forceShutdown();
        return callback(null, checkResponse(answer));
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${options.host}:0`, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    address: options.host,
    port,
    calls: () => calls,
    checks: () => state.received,
    authorities: () => authorities,
    behave: (behaviour: AuthorizerBehaviour) => void (state.behaviour = behaviour),
    reset() {
      calls = 0;
      state.received.length = 0;
      authorities.length = 0;
      state.behaviour = { answer: { kind: 'allow' } };
    },
    async close() {
      state.closeDelays();
      server.forceShutdown();
    },
  };
}
