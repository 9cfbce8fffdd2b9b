import type { EnvoyProtos } from '../envoy/envoy-protos.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE, SECRET_TYPE } from '../envoy/type-urls.js';
import type { XdsConnection } from '../xds-connection.js';

const ADMIN = 'type.googleapis.com/envoy.admin.v3.';
const REDACTED = '[redacted]';
/** Fields whose content is key material, wherever they appear. */
const SECRET_FIELDS = new Set(['private_key', 'password', 'session_ticket_keys', 'hmac_secret', 'oauth_token_secret']);

/**
 * What was last sent to a proxy, shaped like Envoy's `/config_dump` (ClustersConfigDump,
 * ListenersConfigDump, RoutesConfigDump, EndpointsConfigDump, SecretsConfigDump), with
 * private keys and other key material replaced by `[redacted]`.
 */
export function buildConfigDump(con: XdsConnection, protos: EnvoyProtos): { configs: object[] } {
  const entries = (typeUrl: string): Array<{ name: string; version: string; lastUpdated: string; message: Record<string, unknown> }> => {
    const held = con.held.get(typeUrl);
    if (!held) return [];
    return [...held.entries()]
      .filter(([, entry]) => entry.resource !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, entry]) => ({
        name,
        version: con.watch(typeUrl)?.versionSent ?? entry.version,
        lastUpdated: new Date(entry.sentAt).toISOString(),
        message: redactSecrets(protos.decodeAny(entry.resource?.any ?? { type_url: typeUrl, value: new Uint8Array() })) as Record<string, unknown>,
      }));
  };
  const versionOf = (typeUrl: string): string => con.watch(typeUrl)?.versionSent ?? '';
  const strip = (message: Record<string, unknown>): Record<string, unknown> => {
    const { ['@type']: _type, ...rest } = message;
    return rest;
  };
  return {
    configs: [
      {
        '@type': `${ADMIN}ClustersConfigDump`,
        version_info: versionOf(CLUSTER_TYPE),
        dynamic_active_clusters: entries(CLUSTER_TYPE).map((e) => ({
          version_info: e.version,
          cluster: { '@type': CLUSTER_TYPE, ...strip(e.message) },
          last_updated: e.lastUpdated,
        })),
      },
      {
        '@type': `${ADMIN}ListenersConfigDump`,
        version_info: versionOf(LISTENER_TYPE),
        dynamic_listeners: entries(LISTENER_TYPE).map((e) => ({
          name: e.name,
          active_state: { version_info: e.version, listener: { '@type': LISTENER_TYPE, ...strip(e.message) }, last_updated: e.lastUpdated },
        })),
      },
      {
        '@type': `${ADMIN}RoutesConfigDump`,
        dynamic_route_configs: entries(ROUTE_TYPE).map((e) => ({
          version_info: e.version,
          route_config: { '@type': ROUTE_TYPE, ...strip(e.message) },
          last_updated: e.lastUpdated,
        })),
      },
      {
        '@type': `${ADMIN}EndpointsConfigDump`,
        dynamic_endpoint_configs: entries(ENDPOINT_TYPE).map((e) => ({
          version_info: e.version,
          endpoint_config: { '@type': ENDPOINT_TYPE, ...strip(e.message) },
          last_updated: e.lastUpdated,
        })),
      },
      {
        '@type': `${ADMIN}SecretsConfigDump`,
        dynamic_active_secrets: entries(SECRET_TYPE).map((e) => ({
          name: e.name,
          version_info: e.version,
          last_updated: e.lastUpdated,
          secret: { '@type': SECRET_TYPE, ...strip(e.message) },
        })),
      },
    ],
  };
}

/** A copy of a decoded message with key material replaced, also inside PEM text anywhere. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (typeof value === 'string') return /PRIVATE KEY-----/.test(value) ? REDACTED : value;
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    out[key] = SECRET_FIELDS.has(key) ? redactField(field) : redactSecrets(field);
  }
  return out;
}

function redactField(field: unknown): unknown {
  // A DataSource keeps its shape so that the dump still reads like Envoy's.
  if (typeof field === 'object' && field !== null && !Array.isArray(field)) {
    return Object.fromEntries(Object.keys(field).map((key) => [key, REDACTED]));
  }
  return REDACTED;
}
