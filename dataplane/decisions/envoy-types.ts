/** The type URLs of the Envoy extensions the embedded data plane implements. */
export const HCM_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
export const TCP_PROXY_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
export const NETWORK_RBAC_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC';
export const HTTP_RBAC_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';
export const HTTP_EXT_AUTHZ_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
export const NETWORK_EXT_AUTHZ_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.ext_authz.v3.ExtAuthz';
/** The namespaces the RBAC filters write their dynamic metadata under (their extension names). */
export const HTTP_RBAC_FILTER = 'envoy.filters.http.rbac';
export const NETWORK_RBAC_FILTER = 'envoy.filters.network.rbac';
export const JWT_AUTHN_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication';
export const ROUTER_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';
export const DOWNSTREAM_TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
export const RAW_BUFFER_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer';
/** Listener filters that only inspect (the data plane always sniffs TLS and reads the original destination). */
export const INSPECTOR_TYPES: ReadonlySet<string> = new Set([
  'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
  'type.googleapis.com/envoy.extensions.filters.listener.http_inspector.v3.HttpInspector',
  'type.googleapis.com/envoy.extensions.filters.listener.original_dst.v3.OriginalDst',
]);

/** A filter or transport socket: a name and a typed config carrying `@type`. */
export interface TypedConfig {
  name: string;
  typed_config?: { '@type'?: string } & Record<string, unknown>;
  is_optional?: boolean;
}
