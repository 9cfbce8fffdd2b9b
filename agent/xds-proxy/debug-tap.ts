import type { EnvoyProtos } from '../../xds/envoy/index.js';
import { jsonToStruct, type JsonValue } from '../../xds/envoy/index.js';
import { DEBUG_SYNCZ_TYPE, DEBUG_TYPE } from '../../xds/envoy/index.js';
import type { RequestVerdict } from './xds-proxy.js';
import { errorMessage } from '../../runtime/index.js';

/** The port where the agent offers the daemon's debug API (PROXY_XDS_DEBUG_VIA_AGENT). */
export const DEBUG_TAP_PORT = 15004;
const DEBUG_TYPES: readonly string[] = [DEBUG_TYPE, DEBUG_SYNCZ_TYPE];

/** Where the debug port listens: the pod's loopback, or the instance address when that is a loopback one already (local mode). */
export function debugTapHost(instanceIp: string): string {
  if (instanceIp.startsWith('127.')) return instanceIp;
  return instanceIp === '::1' ? '[::1]' : '127.0.0.1';
}

/**
 * What the debug port lets through to the daemon: DiscoveryRequests of the debug types only
 * (anything else ends the stream naming the type), with the agent's node added when the client
 * sent none, so a tool in the pod needs to know nothing but the resource it asks for.
 */
export function debugTapInspector(protos: EnvoyProtos, node: { id: string; metadata: Record<string, unknown> }): (message: Buffer) => RequestVerdict {
  const Request = protos.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
  const agentNode = { id: node.id, metadata: jsonToStruct(node.metadata as Record<string, JsonValue>) };
  return (message) => {
    let request: Record<string, unknown>;
    try {
      request = Request.toObject(Request.decode(message)) as Record<string, unknown>;
    } catch (error) {
      return { refuse: `not a DiscoveryRequest: ${errorMessage(error)}` };
    }
    const typeUrl = typeof request['type_url'] === 'string' ? request['type_url'] : '';
    if (!DEBUG_TYPES.includes(typeUrl)) return { refuse: `the debug port forwards only ${DEBUG_TYPES.join(' and ')}, not "${typeUrl}"` };
    if (request['node']) return { forward: message };
    const encoded = Request.encode(Request.fromObject({ ...request, node: agentNode })).finish();
    return { forward: Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength) };
  };
}
