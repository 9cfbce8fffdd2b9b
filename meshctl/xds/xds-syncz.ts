import { shortType, structToJson, type EnvoyProtos, type StructMessage } from '../../xds/envoy/index.js';
import type { SynczEntry } from '../proxystatus/proxy-status.js';
import type { XdsResponse } from './xds-query.js';

/** Who answered, from `control_plane.identifier`: `MISSING` when absent, `INVALID` when unreadable. */
export interface ControlPlaneIdentity {
  readonly id: string;
  readonly component: string;
  /** The daemon's build information (`info`), when it sent it. */
  readonly info?: Record<string, unknown>;
}

export function controlPlaneOf(response: XdsResponse): ControlPlaneIdentity {
  const identifier = response.control_plane?.identifier ?? '';
  if (identifier === '') return { id: 'MISSING', component: 'meshd' };
  try {
    const parsed = JSON.parse(identifier) as { ID?: unknown; Component?: unknown; info?: unknown };
    if (typeof parsed.ID !== 'string' || parsed.ID === '') return { id: 'INVALID', component: 'meshd' };
    const info = typeof parsed.info === 'object' && parsed.info !== null ? (parsed.info as Record<string, unknown>) : undefined;
    return { id: parsed.ID, component: typeof parsed.Component === 'string' ? parsed.Component : 'meshd', ...(info ? { info } : {}) };
  } catch {
    return { id: 'INVALID', component: 'meshd' };
  }
}

interface ClientConfigMessage {
  node?: { id?: string; metadata?: StructMessage | null } | null;
  generic_xds_configs?: { type_url?: string; config_status?: string }[];
}

/** One proxy of a syncz answer, with its node metadata (NAMESPACE, CLUSTER_ID, MESH_VERSION). */
export interface XdsProxy extends SynczEntry {
  readonly namespace?: string;
}

/**
 * The proxies of a `mesh.io/debug/syncz` response (CSDS ClientConfigs): each node's id and
 * metadata, and per type its config status (`SYNCED`, `NOT_SENT`, `STALE`…).
 */
export function proxiesOfSyncz(protos: EnvoyProtos, response: XdsResponse): XdsProxy[] {
  return response.resources.map((any) => {
    const config = protos.decodeAny({ type_url: any.type_url, value: any.value }) as ClientConfigMessage;
    const metadata = structToJson(config.node?.metadata);
    const text = (key: string): string | undefined => (typeof metadata[key] === 'string' && metadata[key] !== '' ? metadata[key] : undefined);
    const [clusterId, meshVersion, namespace] = [text('CLUSTER_ID'), text('MESH_VERSION'), text('NAMESPACE')];
    return {
      proxy: config.node?.id ?? '',
      ...(clusterId ? { clusterId } : {}),
      ...(meshVersion ? { meshVersion } : {}),
      ...(namespace ? { namespace } : {}),
      types: (config.generic_xds_configs ?? []).map((entry) => ({ type: xdsColumn(entry.type_url ?? ''), status: entry.config_status ?? 'UNKNOWN' })),
    };
  });
}

/** The table column of a type URL: `cds`, `lds`… and `ecds` for extension configs. */
function xdsColumn(typeUrl: string): string {
  return typeUrl.endsWith('envoy.config.core.v3.TypedExtensionConfig') ? 'ecds' : shortType(typeUrl);
}

/** Every daemon's proxies by the control plane id that answered (daemons with one id merged). */
export function proxiesByControlPlane(protos: EnvoyProtos, answers: ReadonlyMap<string, XdsResponse>): Map<string, XdsProxy[]> {
  const out = new Map<string, XdsProxy[]>();
  for (const response of answers.values()) {
    const id = controlPlaneOf(response).id;
    out.set(id, [...(out.get(id) ?? []), ...proxiesOfSyncz(protos, response)]);
  }
  return out;
}
