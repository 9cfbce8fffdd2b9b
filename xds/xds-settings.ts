import { parseCidrList, SettingsError, type Settings } from '../runtime/index.js';
import type { XdsAuthPolicy } from './ads-service.js';
import type { XdsTuning } from './discovery-server.js';
import type { GrpcTransportOptions } from './grpc-listener.js';
import type { MeshGeneratorSettings } from './mesh-generators.js';
import type { JwksResolverOptions, JwtAuthnOptions } from './security/index.js';
import type { XdsAuthenticator } from './xds-auth.js';
import type { XdsServerOptions } from './xds-server.js';

/** The push tuning of the settings registry. */
export function xdsTuningFromSettings(settings: Settings<'pilot-discovery'>): XdsTuning {
  return {
    debounceAfterMs: settings.get('PILOT_DEBOUNCE_AFTER'),
    debounceMaxMs: settings.get('PILOT_DEBOUNCE_MAX'),
    enableEdsDebounce: settings.get('PILOT_ENABLE_EDS_DEBOUNCE'),
    pushThrottle: settings.get('PILOT_PUSH_THROTTLE'),
    enableCache: settings.get('PILOT_ENABLE_XDS_CACHE'),
    cacheSize: settings.get('PILOT_XDS_CACHE_SIZE'),
    sendTimeoutMs: settings.get('PILOT_XDS_SEND_TIMEOUT'),
    cacheStats: settings.get('PILOT_XDS_CACHE_STATS'),
  };
}

/** The keepalive flags of `pilot-discovery discovery` (milliseconds, as the CLI parses them). */
export interface KeepaliveFlags {
  keepaliveInterval: number;
  keepaliveTimeout: number;
  keepaliveMaxServerConnectionAge: number;
}

export function grpcTransportFromSettings(settings: Settings<'pilot-discovery'>, flags: KeepaliveFlags): GrpcTransportOptions {
  return {
    keepaliveIntervalMs: flags.keepaliveInterval,
    keepaliveTimeoutMs: flags.keepaliveTimeout,
    maxConnectionAgeMs: flags.keepaliveMaxServerConnectionAge,
    maxRecvMsgSize: settings.get('MESH_GPRC_MAXRECVMSGSIZE'),
    maxStreams: settings.get('MESH_GPRC_MAXSTREAMS'),
  };
}

export function xdsAuthPolicyFromSettings(settings: Settings<'pilot-discovery'>, authenticators: readonly XdsAuthenticator[]): XdsAuthPolicy {
  return {
    authenticators,
    xdsAuth: settings.get('XDS_AUTH'),
    xdsAuthPlaintext: settings.get('XDS_AUTH_PLAINTEXT'),
    identityCheck: settings.get('PILOT_ENABLE_XDS_IDENTITY_CHECK'),
  };
}

export function meshGeneratorSettingsFromSettings(settings: Settings<'pilot-discovery'>): MeshGeneratorSettings {
  return {
    skipValidateTrustDomain: settings.get('PILOT_SKIP_VALIDATE_TRUST_DOMAIN'),
    scopeToNamespace: settings.get('PILOT_SCOPE_GATEWAY_TO_NAMESPACE'),
    useTargetPortForRoutes: settings.get('PILOT_USE_TARGET_PORT_FOR_GATEWAY_ROUTES'),
    filterGatewayClusters: settings.get('PILOT_FILTER_GATEWAY_CLUSTER_CONFIG'),
    collapseRoutes: settings.get('PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION'),
    stripHostPort: settings.get('MESH_GATEWAY_STRIP_HOST_PORT'),
    defaultRequestTimeoutMs: settings.get('MESH_DEFAULT_REQUEST_TIMEOUT'),
    acceptHttp10: settings.get('PILOT_HTTP10'),
    edsForHeadless: settings.get('PILOT_ENABLE_EDS_FOR_HEADLESS_SERVICES'),
    headlessPodListeners: settings.get('PILOT_ENABLE_HEADLESS_SERVICE_POD_LISTENERS'),
    sidecarUseRemoteAddress: settings.get('PILOT_SIDECAR_USE_REMOTE_ADDRESS'),
    inboundPassthrough: settings.get('PILOT_ENABLE_INBOUND_PASSTHROUGH'),
    delayedCloseTimeoutMs: settings.get('PILOT_HTTP_DELAYED_CLOSE_TIMEOUT'),
  };
}

/** PILOT_JWT_ENABLE_REMOTE_JWKS: whether proxies fetch the key sets of mesh Services themselves. */
export function jwksRemoteFromSettings(settings: Settings<'pilot-discovery'>): Required<JwtAuthnOptions> {
  return { remoteJwks: settings.get('PILOT_JWT_ENABLE_REMOTE_JWKS') };
}

/** How often the key sets of RequestAuthentication issuers are fetched again. */
export function jwksRefreshFromSettings(settings: Settings<'pilot-discovery'>): Pick<JwksResolverOptions, 'refreshIntervalMs'> {
  return { refreshIntervalMs: settings.get('PILOT_JWT_PUB_KEY_REFRESH_INTERVAL') };
}

/** BLOCKED_CIDRS_IN_JWKS_URIS, checked when the settings were loaded: the ranges no key set is fetched from. */
export function jwksBlockedCidrsFromSettings(settings: Settings<'pilot-discovery'>): Required<Pick<JwksResolverOptions, 'blockedCidrs'>> {
  const value = settings.get('BLOCKED_CIDRS_IN_JWKS_URIS');
  const list = parseCidrList(value);
  if (!list.ok) throw new SettingsError([{ name: 'BLOCKED_CIDRS_IN_JWKS_URIS', value, expected: `CIDR ranges; ${JSON.stringify(list.entry)} is not one` }]);
  return { blockedCidrs: list.cidrs };
}

/** Whether the dangerous admin endpoints are served on the debug interface. */
export function adminEndpointsFromSettings(settings: Settings<'pilot-discovery'>): Required<Pick<XdsServerOptions<unknown>, 'unsafeAdminEndpoints'>> {
  return { unsafeAdminEndpoints: settings.get('UNSAFE_ENABLE_ADMIN_ENDPOINTS') };
}

/** PILOT_ENABLE_CONFIG_DISTRIBUTION_TRACKING and PILOT_DISTRIBUTION_HISTORY_RETENTION: the ledger behind `/debug/config_distribution`, or none. */
export function distributionFromSettings(settings: Settings<'pilot-discovery'>): { readonly retentionMs: number } | undefined {
  return settings.get('PILOT_ENABLE_CONFIG_DISTRIBUTION_TRACKING') ? { retentionMs: settings.get('PILOT_DISTRIBUTION_HISTORY_RETENTION') } : undefined;
}
