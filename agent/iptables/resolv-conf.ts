import { addressFamily } from './cidr.js';

export const RESOLV_CONF_PATH = '/etc/resolv.conf';

/** The `nameserver` addresses of a resolv.conf, in order, IPv4 and IPv6 alike. */
export function parseResolvConf(text: string): string[] {
  const servers: string[] = [];
  for (const line of text.split('\n')) {
    const [keyword, address] = line
      .replace(/[#;].*$/, '')
      .trim()
      .split(/\s+/);
    if (keyword === 'nameserver' && address !== undefined && addressFamily(address)) servers.push(address);
  }
  return servers;
}
