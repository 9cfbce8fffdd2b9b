import type { Service } from '../../controllers/index.js';
import type { Proxy } from '../proxy.js';

/**
 * The domains of a service's virtual host on one port, as the reference builds them for a proxy:
 * the FQDN, then (for a Kubernetes host seen from a Kubernetes proxy) the short name when both
 * share a namespace, `<name>.<ns>.svc` and `<name>.<ns>`, then the cluster IP; each followed by its
 * `:<port>` form.
 */
export function buildVirtualHostDomains(service: Service, port: number, proxy: Proxy): string[] {
  const domains = withPort(service.hostname, port);
  for (const alt of altHosts(service.hostname, proxy.dnsDomain)) domains.push(...withPort(alt, port));
  const vip = service.clusterIp;
  if (vip !== undefined && vip !== '' && vip !== 'None' && vip !== '0.0.0.0') domains.push(...withPort(vip.includes(':') ? `[${vip}]` : vip, port));
  return domains;
}

function withPort(host: string, port: number): string[] {
  return [host, `${host}:${port}`];
}

/** `reviews`, `reviews.ns.svc`, `reviews.ns` (the short name only in the proxy's own namespace). */
function altHosts(hostname: string, proxyDomain: string): string[] {
  const inProxyDomain = proxyDomain.indexOf('.svc.');
  const inHost = hostname.indexOf('.svc.');
  if (inProxyDomain < 0 || inHost <= 0) return [];
  const firstDot = hostname.indexOf('.');
  if (firstDot + 1 >= hostname.length || firstDot + 1 > inHost) return [];
  const nameAndNamespace = hostname.slice(0, inHost);
  const sameNamespace = hostname.slice(firstDot + 1, inHost) === proxyDomain.slice(0, inProxyDomain);
  return sameNamespace ? [hostname.slice(0, firstDot), `${nameAndNamespace}.svc`, nameAndNamespace] : [nameAndNamespace, `${nameAndNamespace}.svc`];
}
