import type { JwksFetcher } from './jwt-authn.js';
import type { ExtAuthzTransport, ExtAuthzVerdict, HeaderMutation, RequestBodyReader } from './ext-authz-types.js';
import type { ConnectionFacts, DynamicMetadata } from './facts.js';
import type { JwtVerdict } from './jwt-authn.js';
import type { RbacVerdict } from './rbac.js';
import type { RouteDecision } from './route-configuration.js';
import type { RecordedTokenVerifier } from './recorded-request.js';
import type { UpstreamTls } from './upstream-tls.js';

export type UpstreamDecision =
  | { readonly kind: 'endpoint'; readonly cluster: string; readonly address: string; readonly port: number; readonly tls: UpstreamTls }
  /** ORIGINAL_DST: connect where the client was going (on `portOverride` when the cluster sets one). */
  | { readonly kind: 'original-destination'; readonly cluster: string; readonly tls: UpstreamTls; readonly portOverride?: number }
  | { readonly kind: 'no-healthy-upstream'; readonly cluster: string }
  | { readonly kind: 'unknown-cluster'; readonly cluster: string };

/** Picks an upstream of a cluster (`pick`: an increasing counter, round robin over endpoints). */
export type UpstreamChooser = (cluster: string, pick: number) => UpstreamDecision;

/** What the data plane does with one HTTP request on an accepted chain. */
export type HttpDecision =
  | {
      readonly kind: 'respond';
      readonly status: number;
      readonly body: string;
      /** Which stage answered. */
      readonly by: 'path' | 'jwt' | 'rbac' | 'ext_authz' | 'router';
      /** A header sent more than once keeps each value. */
      readonly headers?: Readonly<Record<string, string | readonly string[]>>;
      readonly jwt?: JwtVerdict;
      readonly rbac: readonly RbacVerdict[];
      /** What each ext_authz filter reached did (absent when the chain has none). */
      readonly extAuthz?: readonly ExtAuthzVerdict[];
      readonly route?: RouteDecision;
    }
  | {
      readonly kind: 'forward';
      readonly route: Extract<RouteDecision, { kind: 'cluster' }>;
      readonly upstream: UpstreamDecision;
      /** The request line and headers the upstream receives. */
      readonly path: string;
      readonly host: string;
      readonly headersToSet: Readonly<Record<string, string>>;
      readonly headersToRemove: readonly string[];
      /** Edits of the upstream's response on its way to the client (an authorization server's), after the route's. */
      readonly responseHeaderMutations?: readonly HeaderMutation[];
      readonly jwt?: JwtVerdict;
      readonly rbac: readonly RbacVerdict[];
      readonly extAuthz?: readonly ExtAuthzVerdict[];
      readonly metadata: DynamicMetadata;
    };

export type TcpDecision =
  | { readonly kind: 'reset'; readonly by: 'rbac' | 'ext_authz'; readonly rbac: readonly RbacVerdict[]; readonly extAuthz?: readonly ExtAuthzVerdict[] }
  | { readonly kind: 'forward'; readonly upstream: UpstreamDecision; readonly rbac: readonly RbacVerdict[]; readonly extAuthz?: readonly ExtAuthzVerdict[] };

/** Inputs of a request decision besides the request itself. */
export interface RequestContext {
  /** The connection, with the verified peer certificate once TLS was terminated. */
  readonly connection: ConnectionFacts;
  /** The URI SAN of this proxy's own certificate (XFCC `By`). */
  readonly localUriSan?: string;
  /** This proxy's own address (the pod's): what `x-forwarded-for` gets in place of a loopback peer. */
  readonly localAddress?: string;
  /** Fetches remote JWKS (jwt_authn `remote_jwks`); without it such a provider refuses every token. */
  readonly fetchJwks?: JwksFetcher;
  readonly now: Date;
  /** Uniform in [0, 1): weighted clusters. */
  readonly random: number;
  /** Increasing counter: round robin over endpoints (and the stream id an authorization server sees). */
  readonly pick: number;
  /**
   * Calls authorization servers (ext_authz). Without one, every check is an error (the filter's
   * `failure_mode_allow` and `status_on_error` then decide), so a caller without a network still
   * gets a decision; a caller may record the calls and answer as it chooses.
   */
  readonly extAuthz?: ExtAuthzTransport;
  /** Buffers the request body for a check that asks for it; without one the body reads as empty. */
  readonly requestBody?: RequestBodyReader;
  /** Replays only: the traffic record's stand-in tokens, checked by their recorded claims instead of a signature. */
  readonly recordedTokens?: RecordedTokenVerifier;
}
