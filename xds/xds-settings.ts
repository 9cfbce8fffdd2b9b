import type { Settings } from '../controllers/runtime/index.js';
import type { XdsAuthPolicy } from './ads-service.js';
import type { XdsTuning } from './discovery-server.js';
import type { GrpcTransportOptions } from './grpc-listener.js';
import type { XdsAuthenticator } from './xds-auth.js';

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
