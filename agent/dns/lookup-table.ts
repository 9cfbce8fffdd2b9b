import { isIPv4, isIPv6 } from 'node:net';
import type { Answer } from 'dns-packet';

/** A `NameTable` as decoded from NDS (snake_case, absent fields absent). */
export interface NameTableMessage {
  readonly table?: Readonly<Record<string, NameInfoMessage>>;
}

export interface NameInfoMessage {
  readonly ips?: readonly string[];
  readonly registry?: string;
  readonly shortname?: string;
  readonly namespace?: string;
  readonly alt_hosts?: readonly string[];
}

/** Where the proxy stands: its namespace, its DNS domain (`<ns>.svc.cluster.local`) and resolv.conf's search domains. */
export interface LookupContext {
  readonly proxyNamespace: string;
  readonly proxyDomain: string;
  readonly searchDomains: readonly string[];
}

/** What the table says of a name: its records (possibly none: NOERROR, empty), or nothing known (ask upstream). */
export interface LookupTable {
  readonly hosts: number;
  lookup(type: string, name: string): Answer[] | undefined;
}

/** Answers of known names are short-lived, so a client that honours the TTL soon sees a new address. */
export const ANSWER_TTL_SECONDS = 30;

/**
 * The agent's lookup table, built once per name table as the reference builds it: every host
 * (lower case), a Service also as `name.ns`, `name.ns.svc` and, in the proxy's namespace, `name`;
 * and for each of those, the name under the first search domain as a CNAME to it, because a
 * client's resolver tries that name first.
 */
export function buildLookupTable(message: NameTableMessage, context: LookupContext): LookupTable {
  const domainParts = trimDots(context.proxyDomain).split('.');
  if (domainParts[0] === context.proxyNamespace) domainParts.shift();
  const serviceDomain = domainParts.join('.');
  const firstSearch = context.searchDomains[0] !== undefined ? trimDots(context.searchDomains[0]).toLowerCase() : undefined;

  const allHosts = new Set<string>();
  const v4 = new Map<string, string[]>();
  const v6 = new Map<string, string[]>();
  const cname = new Map<string, string>();
  for (const [host, info] of Object.entries(message.table ?? {})) {
    const ips = info.ips ?? [];
    const ipv4 = ips.filter((ip) => isIPv4(ip));
    const ipv6 = ips.filter((ip) => isIPv6(ip));
    if (ipv4.length === 0 && ipv6.length === 0) continue;
    const names =
      info.registry === 'Kubernetes' ? serviceNames(trimDots(host), info, context.proxyNamespace, serviceDomain, domainParts[0]) : new Set([trimDots(host)]);
    for (const raw of names) {
      const name = raw.toLowerCase();
      allHosts.add(name);
      if (ipv4.length > 0) v4.set(name, ipv4);
      if (ipv6.length > 0) v6.set(name, ipv6);
      if (firstSearch === undefined || firstSearch === '') continue;
      const expanded = `${name}.${firstSearch}`;
      if (names.has(expanded)) continue;
      cname.set(expanded, name);
      allHosts.add(expanded);
    }
  }

  return {
    hosts: allHosts.size,
    lookup(type, asked) {
      const question = trimDots(asked);
      let name = question.toLowerCase();
      let wildcard = false;
      if (!allHosts.has(name)) {
        const labels = name.split('.');
        const match = labels.map((_, index) => `*.${labels.slice(index + 1).join('.')}`).find((candidate) => allHosts.has(candidate));
        if (match === undefined) return undefined;
        name = match;
        wildcard = true;
      }
      const chain: Answer[] = [];
      const target = cname.get(name);
      if (target !== undefined) {
        chain.push({ type: 'CNAME', name: question, ttl: ANSWER_TTL_SECONDS, class: 'IN', data: target });
        name = target;
      }
      if (type !== 'A' && type !== 'AAAA') return undefined;
      const ips = (type === 'A' ? v4 : v6).get(name) ?? [];
      if (ips.length === 0) return [];
      const owner = wildcard && chain.length === 0 ? question : name;
      return [...chain, ...shuffled(ips).map((ip): Answer => ({ type, name: owner, ttl: ANSWER_TTL_SECONDS, class: 'IN', data: ip }))];
    },
  };
}

/** `host`, and when it is in the proxy's cluster domain: `name.ns`, `name.ns.<first label>` and, in the proxy's namespace, `name`. */
function serviceNames(host: string, info: NameInfoMessage, proxyNamespace: string, serviceDomain: string, firstLabel: string | undefined): Set<string> {
  const names = new Set([host]);
  if (serviceDomain === '' || !host.endsWith(serviceDomain) || !info.shortname || !info.namespace) return names;
  names.add(`${info.shortname}.${info.namespace}`);
  if (info.namespace === proxyNamespace) names.add(info.shortname);
  if (firstLabel !== undefined) names.add(`${info.shortname}.${info.namespace}.${firstLabel}`);
  for (const alt of info.alt_hosts ?? []) names.add(trimDots(alt));
  return names;
}

function trimDots(name: string): string {
  return name.replace(/^\.+|\.+$/g, '');
}

/** The addresses in a random order, as the reference answers (clients take the first: a poor man's balancing). */
function shuffled(ips: readonly string[]): string[] {
  const out = [...ips];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as string, out[i] as string];
  }
  return out;
}
