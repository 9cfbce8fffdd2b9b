import { isIP } from 'node:net';

/** What the DNS proxy reads of resolv.conf: the name servers in order, and the search domains. */
export interface ResolverConfig {
  readonly nameServers: readonly string[];
  readonly search: readonly string[];
}

/** `nameserver` lines (IP addresses only) and the last `search` (or `domain`) line, as resolvers read them. */
export function parseResolverConfig(text: string): ResolverConfig {
  const nameServers: string[] = [];
  let search: string[] = [];
  for (const line of text.split('\n')) {
    const [keyword, ...values] = line
      .replace(/[#;].*$/, '')
      .trim()
      .split(/\s+/);
    if (keyword === 'nameserver' && values[0] !== undefined && isIP(values[0]) !== 0) nameServers.push(values[0]);
    else if ((keyword === 'search' || keyword === 'domain') && values.length > 0) search = values;
  }
  return { nameServers, search };
}
