import type { ServicePort } from '../../controllers/index.js';

/** How a service port carries traffic: `http`, another protocol (`opaque`), or unknown and sniffed (`auto`). */
export type ServicePortProtocol = 'http' | 'opaque' | 'auto';

const HTTP_PROTOCOLS = new Set(['http', 'http2', 'grpc', 'grpc-web', 'h2c']);
const OPAQUE_PROTOCOLS = new Set(['tcp', 'tls', 'https', 'mongo', 'mysql', 'redis', 'udp', 'sctp']);

/**
 * The protocol of a service port as the reference reads it: `appProtocol` first, else the port
 * name's prefix before the first `-` (`http-web`, `grpc`); anything unrecognised is sniffed.
 */
export function servicePortProtocol(port: ServicePort): ServicePortProtocol {
  if (port.protocol !== 'TCP') return 'opaque';
  const declared = (port.appProtocol ?? port.name.split('-')[0] ?? '').toLowerCase();
  const name = declared.startsWith('kubernetes.io/') ? declared.slice('kubernetes.io/'.length) : declared;
  if (HTTP_PROTOCOLS.has(name)) return 'http';
  if (OPAQUE_PROTOCOLS.has(name)) return 'opaque';
  return 'auto';
}

/** Whether sidecar HTTP routes serve the port: declared HTTP, or sniffed. */
export function isHttpRoutable(port: ServicePort): boolean {
  return servicePortProtocol(port) !== 'opaque';
}
