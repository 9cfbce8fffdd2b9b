/**
 * The seam between the ext_authz decisions (pure) and whoever makes the call: the data plane
 * over real sockets, or a caller such as `x authz explain` that records which cluster would be
 * called and answers as it chooses. Messages keep the Check API's snake_case field names.
 */

/** Why a call to an authorization server got no answer (Envoy's "error" outcome). */
export interface ExtAuthzFailure {
  readonly kind: 'failure';
  readonly reason: 'timeout' | 'unknown-cluster' | 'no-healthy-upstream' | 'connect-failure' | 'reset' | 'grpc-status' | 'no-transport';
  readonly detail: string;
}

/** A check request to an HTTP authorization server (one HTTP/1.1 request to a cluster's endpoint). */
export interface ExtAuthzHttpCall {
  readonly cluster: string;
  readonly timeoutMs: number;
  readonly method: string;
  /** `path_prefix` + the original path, query included. */
  readonly path: string;
  /** Lower-case names, Host and Content-Length included. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

export type ExtAuthzHttpAnswer =
  | {
      readonly kind: 'response';
      readonly status: number;
      /** Lower-case names; a header sent more than once keeps each value. */
      readonly headers: Readonly<Record<string, string | readonly string[]>>;
      readonly body: Uint8Array;
    }
  | ExtAuthzFailure;

/** `envoy.config.core.v3.Address` (a socket address). */
export interface AddressMessage {
  readonly socket_address: { readonly address: string; readonly port_value: number };
}

/** `envoy.service.auth.v3.AttributeContext.Peer`, the fields the data plane fills. */
export interface PeerMessage {
  readonly address?: AddressMessage;
  readonly principal?: string;
}

/** `AttributeContext.HttpRequest`. */
export interface HttpRequestMessage {
  readonly id: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly path: string;
  readonly host: string;
  readonly scheme: string;
  readonly protocol: string;
  readonly size: number;
  readonly body?: string;
  readonly raw_body?: Uint8Array;
}

/** `envoy.service.auth.v3.CheckRequest`. */
export interface CheckRequestMessage {
  readonly attributes: {
    readonly source: PeerMessage;
    readonly destination: PeerMessage;
    readonly request?: { readonly time: { readonly seconds: number; readonly nanos: number }; readonly http: HttpRequestMessage };
  };
}

/** `envoy.config.core.v3.HeaderValueOption`, as a decoded answer carries it. */
export interface HeaderValueOptionMessage {
  readonly header?: { readonly key?: string; readonly value?: string } | null;
  readonly append?: { readonly value?: boolean } | null;
  readonly append_action?: string | number;
  readonly keep_empty_value?: boolean;
}

/** `envoy.service.auth.v3.CheckResponse`, as a decoded answer carries it (unset messages absent or null). */
export interface CheckResponseMessage {
  readonly status?: { readonly code?: number; readonly message?: string } | null;
  readonly denied_response?: {
    readonly status?: { readonly code?: string | number } | null;
    readonly headers?: readonly HeaderValueOptionMessage[];
    readonly body?: string;
  } | null;
  readonly ok_response?: {
    readonly headers?: readonly HeaderValueOptionMessage[];
    readonly headers_to_remove?: readonly string[];
    readonly response_headers_to_add?: readonly HeaderValueOptionMessage[];
  } | null;
}

/** A `envoy.service.auth.v3.Authorization/Check` call. */
export interface ExtAuthzGrpcCall {
  readonly cluster: string;
  /** The call's `:authority`; the transport's choice when absent. */
  readonly authority?: string;
  readonly timeoutMs: number;
  readonly request: CheckRequestMessage;
  /** A gauge the transport raises while the call is in flight (the network filter's `active`). */
  readonly activeGauge?: string;
}

/** A CheckResponse, or no answer (a failed call or a non-OK gRPC status of the call itself). */
export type ExtAuthzGrpcAnswer = { readonly kind: 'response'; readonly response: CheckResponseMessage } | ExtAuthzFailure;

/** Makes the calls. Never rejects: a call that cannot be made answers a failure. */
export interface ExtAuthzTransport {
  http(call: ExtAuthzHttpCall): Promise<ExtAuthzHttpAnswer>;
  grpc(call: ExtAuthzGrpcCall): Promise<ExtAuthzGrpcAnswer>;
}

/** The first bytes of a request's body, buffered for the check; `truncated` when the body has more. */
export interface BufferedRequestBody {
  readonly bytes: Uint8Array;
  readonly truncated: boolean;
}

/** Buffers the request body up to `maxBytes` (the rest stays for the upstream). */
export type RequestBodyReader = (maxBytes: number) => Promise<BufferedRequestBody>;

/** What one ext_authz filter did with a request or a connection (its stats). */
export interface ExtAuthzVerdict {
  /** `payload-too-large`: refused with 413 before any check (counted by no ext_authz stat). */
  readonly result: 'disabled' | 'ok' | 'denied' | 'error' | 'payload-too-large';
  /** An error let through by `failure_mode_allow`. */
  readonly failureModeAllowed?: boolean;
  /** The cluster called; absent when the filter was disabled. */
  readonly calledCluster?: string;
  /** The route's target cluster, whose scope the HTTP filter's stats go to. */
  readonly statCluster?: string;
  /** The network filter's stat prefix. */
  readonly statPrefix?: string;
  /** Why the check failed, for logs. */
  readonly detail?: string;
}

/** One header edit an authorization server asked for (Envoy's HeaderAppendAction). */
export interface HeaderMutation {
  readonly name: string;
  readonly value: string;
  readonly action: 'append' | 'add-if-absent' | 'overwrite' | 'overwrite-if-exists';
}
