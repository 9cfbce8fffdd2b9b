/** The parts of an absolute-form request target (`http://host:port/path?query`) a sidecar's outbound capture reads. */
export interface ProxyFormTarget {
  /** `host` or `host:port` as the Host header carries it, the host name in lower case. */
  readonly host: string;
  readonly port: number;
  /** The path and query exactly as sent (the HCM normalizes them as configured, or not at all). */
  readonly path: string;
}

const ABSOLUTE_FORM = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([\s\S]*)$/;

/**
 * Splits an absolute-form target without resolving its path: a URL parser would remove dot
 * segments, turn backslashes into slashes and drop the fragment, which must be the HCM's choice
 * (`pathNormalization: NONE` forwards the path unchanged). Undefined when it is not one.
 */
export function parseProxyForm(target: string): ProxyFormTarget | undefined {
  const match = ABSOLUTE_FORM.exec(target);
  if (!match) return undefined;
  const scheme = (match[1] as string).toLowerCase();
  const authority = match[2] as string;
  const rest = match[3] as string;
  if (authority === '' || authority.includes('@')) return undefined;
  let hostname: string;
  let portText: string | undefined;
  if (authority.startsWith('[')) {
    const end = authority.indexOf(']');
    if (end < 0) return undefined;
    hostname = authority.slice(0, end + 1);
    const after = authority.slice(end + 1);
    if (after !== '' && !after.startsWith(':')) return undefined;
    portText = after === '' ? undefined : after.slice(1);
  } else {
    const colon = authority.lastIndexOf(':');
    hostname = colon < 0 ? authority : authority.slice(0, colon);
    portText = colon < 0 ? undefined : authority.slice(colon + 1);
  }
  if (hostname === '' || /[\s<>"{}|\\^`]/.test(hostname)) return undefined;
  if (portText !== undefined && !/^\d{1,5}$/.test(portText)) return undefined;
  const port = portText !== undefined ? Number(portText) : scheme === 'https' ? 443 : 80;
  if (port < 1 || port > 65535) return undefined;
  hostname = hostname.toLowerCase();
  return {
    host: portText !== undefined ? `${hostname}:${portText}` : hostname,
    port,
    path: rest.startsWith('/') ? rest : `/${rest}`,
  };
}
