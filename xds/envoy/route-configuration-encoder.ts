import protobuf from 'protobufjs';
import { MeshError } from '../../runtime/index.js';
import { partKeyOf, type EncodedParts } from './encoded-parts.js';

/** A message checked and encoded by the protos' strict path; undefined when it does not pass (the caller then reports why). */
export type EncodeChecked = (type: protobuf.Type, message: object) => Uint8Array | undefined;

/**
 * Encodes RouteConfigurations whose virtual hosts are shared objects: a sidecar's route
 * configuration for a port holds a virtual host per service, and the virtual hosts of other
 * namespaces' services are the same for every namespace, so the generator hands the same objects
 * to each, each with a part key (`withPartKey`). A keyed virtual host is encoded once while the
 * caller keeps its bytes in `parts`, and its bytes are placed between the configuration's `name` and its other fields. protobufjs writes fields in
 * the order of their numbers and these two are 1 and 2, so the result is byte for byte what
 * encoding the whole message gives.
 */
export function newRouteConfigurationEncoder(
  root: protobuf.Root,
  encodeChecked: EncodeChecked,
): (message: object, parts?: EncodedParts) => Uint8Array | undefined {
  const routeConfiguration = root.lookupType('envoy.config.route.v3.RouteConfiguration');
  const virtualHost = root.lookupType('envoy.config.route.v3.VirtualHost');
  if (routeConfiguration.fields['name']?.id !== 1 || routeConfiguration.fields['virtual_hosts']?.id !== 2) {
    throw new MeshError('proto-layout-changed', 'RouteConfiguration no longer numbers name 1 and virtual_hosts 2');
  }
  const encodeHost = (host: object, kept: EncodedParts | undefined): Uint8Array | undefined => {
    const key = kept && partKeyOf(host);
    if (!kept || key === undefined) return encodeChecked(virtualHost, host);
    const known = kept.get(key);
    if (known) return known;
    const bytes = encodeChecked(virtualHost, host);
    if (bytes) kept.set(key, bytes);
    return bytes;
  };

  return (message, keptParts) => {
    const { name, virtual_hosts: hosts, ...rest } = message as { name?: unknown; virtual_hosts?: unknown };
    if (!Array.isArray(hosts) || hosts.length === 0) return undefined;
    const head = encodeChecked(routeConfiguration, name === undefined ? {} : { name });
    const tail = encodeChecked(routeConfiguration, rest);
    if (!head || !tail) return undefined;
    const parts: Uint8Array[] = [head];
    let length = head.length + tail.length;
    for (const host of hosts) {
      if (typeof host !== 'object' || host === null) return undefined;
      const bytes = encodeHost(host, keptParts);
      if (!bytes) return undefined;
      const prefix = protobuf.Writer.create()
        .uint32((2 << 3) | 2)
        .uint32(bytes.length)
        .finish();
      parts.push(prefix, bytes);
      length += prefix.length + bytes.length;
    }
    parts.push(tail);
    const out = new Uint8Array(length);
    let offset = 0;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  };
}
