import { status, type Server, type ServerDuplexStream, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { errorMessage, MeshError, type Logger } from '../runtime/index.js';
import type { DiscoveryServer } from './discovery-server.js';
import { ADS_SERVICE, CSDS_SERVICE } from './envoy/envoy-protos.js';
import { parseProxy, type NodeMessage } from './proxy.js';
import type { DeltaRequestView, SotwRequestView } from './should-respond.js';
import type { StreamAdmission } from './stream-admission.js';
import { authenticateStream, checkProxyIdentity, parseWorkloadIdentity, type XdsAuthContext, type XdsAuthenticator } from './xds-auth.js';
import type { StreamKind, XdsConnection } from './xds-connection.js';

/** Who may connect: XDS_AUTH, XDS_AUTH_PLAINTEXT, PILOT_ENABLE_XDS_IDENTITY_CHECK and the authenticators. */
export interface XdsAuthPolicy {
  readonly authenticators: readonly XdsAuthenticator[];
  /** XDS_AUTH: authenticate streams on the TLS listener (when an authenticator is configured). */
  readonly xdsAuth: boolean;
  /** XDS_AUTH_PLAINTEXT: authenticate streams on the plaintext listener too. */
  readonly xdsAuthPlaintext: boolean;
  /** PILOT_ENABLE_XDS_IDENTITY_CHECK: an authenticated identity must match the namespace and service account the proxy claims. */
  readonly identityCheck: boolean;
}

type AnyRequest = (SotwRequestView | DeltaRequestView) & { node?: NodeMessage | null };
type StreamCall = ServerDuplexStream<AnyRequest, object>;

/**
 * Registers `StreamAggregatedResources` and `DeltaAggregatedResources` on a grpc-js server.
 * `secure` says whether the server is the TLS listener (authentication applies there).
 */
export function addAdsService<C>(
  server: Server,
  discovery: DiscoveryServer<C>,
  policy: XdsAuthPolicy,
  secure: boolean,
  log: Logger,
  admission: StreamAdmission,
): void {
  const serve = (kind: StreamKind) => (call: StreamCall) => serveStream(kind, call, { discovery, policy, secure, log, admission });
  server.addService(discovery.protos.serviceDefinition(ADS_SERVICE), {
    StreamAggregatedResources: serve('sotw'),
    DeltaAggregatedResources: serve('delta'),
  });
}

interface StreamContext<C> {
  readonly discovery: DiscoveryServer<C>;
  readonly policy: XdsAuthPolicy;
  readonly secure: boolean;
  readonly log: Logger;
  readonly admission: StreamAdmission;
}

/** CSDS: per-proxy sync status, for the same callers as the debug type. */
export function addCsdsService<C>(server: Server, discovery: DiscoveryServer<C>, policy: XdsAuthPolicy, secure: boolean): void {
  // As the debug type: an authenticated caller of the system namespace, never an anonymous one.
  const allowed = async (call: { metadata: StreamCall['metadata']; getAuthContext: StreamCall['getAuthContext'] }): Promise<boolean> => {
    if (!needsAuthentication(policy, secure)) return false;
    const result = await authenticateStream(policy.authenticators, authContextOf(call));
    return 'caller' in result && discovery.debugReader(result.caller.identities)?.all === true;
  };
  const response = (): object => ({ config: discovery.clientConfigs() });
  server.addService(discovery.protos.serviceDefinition(CSDS_SERVICE), {
    StreamClientStatus: (call: ServerDuplexStream<object, object>) => {
      const permitted = allowed(call);
      call.on('data', () => {
        void permitted.then((ok) => {
          if (ok) call.write(response());
          else call.emit('error', { code: status.PERMISSION_DENIED, details: 'client status is only available to the system namespace' });
        });
      });
      call.on('end', () => call.end());
      call.on('error', () => undefined);
    },
    FetchClientStatus: (call: ServerUnaryCall<object, object>, callback: sendUnaryData<object>) => {
      void allowed(call).then((ok) =>
        ok ? callback(null, response()) : callback({ code: status.PERMISSION_DENIED, details: 'client status is only available to the system namespace' }),
      );
    },
  });
}

function serveStream<C>(kind: StreamKind, call: StreamCall, context: StreamContext<C>): void {
  const { discovery, policy, secure, log } = context;
  let ended = false;
  const gone = new AbortController();
  let con: XdsConnection | undefined;
  const cleanup = (): void => {
    if (con) discovery.disconnect(con);
  };
  const fail = (code: number, details: string): void => {
    if (ended) return;
    ended = true;
    cleanup();
    call.emit('error', { code, details });
  };
  call.on('error', () => {
    ended = true;
    cleanup();
  });
  call.on('cancelled', () => {
    ended = true;
    gone.abort();
    cleanup();
  });

  if (!discovery.isReady()) {
    fail(status.UNAVAILABLE, 'server is not ready to serve discovery information');
    return;
  }

  // New streams are admitted at a bounded rate, before any work is spent on them (a reconnect
  // storm must not starve the pushes); a stream refused backs off and retries.
  const admitted = context.admission.admit(gone.signal).then((admit) => {
    if (!admit) {
      log.debug({ peer: call.getPeer() }, 'xDS stream over the admission rate');
      fail(status.RESOURCE_EXHAUSTED, 'request rate limit exceeded: too many new streams, retry with backoff');
    }
    return admit;
  });
  const identities: Promise<readonly string[] | undefined> = admitted.then((admit) =>
    admit && needsAuthentication(policy, secure)
      ? authenticateStream(policy.authenticators, authContextOf(call)).then((result) => {
          if ('caller' in result) return result.caller.identities;
          log.warn({ peer: call.getPeer(), reasons: result.reasons }, 'unauthenticated xDS stream');
          throw result.error;
        })
      : undefined,
  );
  identities.catch(() => undefined);

  const write = (message: object): Promise<void> =>
    new Promise((resolve, reject) => {
      if (ended) {
        reject(new MeshError('stream-closed', 'the stream is closed'));
        return;
      }
      call.write(message, (error?: Error | null) => (error ? reject(error) : resolve()));
    });

  const onRequest = async (request: AnyRequest): Promise<void> => {
    if (ended) return;
    if (!con) {
      let callerIdentities: readonly string[] | undefined;
      try {
        callerIdentities = await identities;
      } catch {
        fail(status.UNAUTHENTICATED, 'authentication failure');
        return;
      }
      let proxy;
      try {
        proxy = parseProxy(request.node);
      } catch (error) {
        fail(status.INVALID_ARGUMENT, errorMessage(error));
        return;
      }
      if (callerIdentities !== undefined && policy.identityCheck) {
        const check = checkProxyIdentity(proxy, callerIdentities);
        if (!check.ok) {
          log.warn({ peer: call.getPeer(), proxy: proxy.id, reason: check.reason }, 'unauthorized xDS stream');
          fail(status.PERMISSION_DENIED, `authorization failed: ${check.reason}`);
          return;
        }
        const { namespace, serviceAccount } = check.identity;
        proxy = { ...proxy, verifiedNamespace: namespace, verifiedIdentity: { namespace, serviceAccount } };
      } else if (callerIdentities !== undefined) {
        const identity = callerIdentities.map(parseWorkloadIdentity).find((parsed) => parsed !== undefined);
        if (identity !== undefined) {
          proxy = {
            ...proxy,
            verifiedNamespace: identity.namespace,
            verifiedIdentity: { namespace: identity.namespace, serviceAccount: identity.serviceAccount },
          };
        }
      }
      if (ended) return;
      con = discovery.connect({ proxy, kind, peerAddress: call.getPeer(), identities: callerIdentities, write, abort: fail });
      // A workload outside Kubernetes gets its WorkloadEntry before any request is answered; a
      // refusal (identity, missing group) ends the stream, as the reference's.
      const refusal = await discovery.registerWorkload(con);
      if (refusal) {
        log.warn({ peer: call.getPeer(), proxy: proxy.id, reason: refusal.details }, 'workload registration refused');
        fail(refusal.code, refusal.details);
        return;
      }
      if (ended) return;
    }
    const connection = con;
    await connection.run(() =>
      kind === 'sotw'
        ? discovery.handleSotwRequest(connection, request as SotwRequestView)
        : discovery.handleDeltaRequest(connection, request as DeltaRequestView),
    );
  };

  let chain: Promise<void> = admitted.then(() => undefined);
  call.on('data', (request: AnyRequest) => {
    chain = chain
      .then(() => onRequest(request))
      .catch((error: unknown) => {
        log.error({ peer: call.getPeer(), error: errorMessage(error) }, 'request failed');
        fail(status.INTERNAL, 'internal error');
      });
  });
  call.on('end', () => {
    void chain.then(() => {
      cleanup();
      if (!ended) {
        ended = true;
        call.end();
      }
    });
  });
}

function needsAuthentication(policy: XdsAuthPolicy, secure: boolean): boolean {
  return policy.xdsAuth && policy.authenticators.length > 0 && (secure || policy.xdsAuthPlaintext);
}

function authContextOf(call: { metadata: StreamCall['metadata']; getAuthContext: StreamCall['getAuthContext'] }): XdsAuthContext {
  const header = call.metadata.get('authorization')[0];
  const bearer = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header.trim())?.[1] : undefined;
  const certificate = call.getAuthContext().sslPeerCertificate?.raw;
  return {
    ...(bearer ? { bearerToken: bearer } : {}),
    ...(certificate ? { peerCertificates: [certificate] } : {}),
  };
}
