/** The trust domain a policy written for `cluster.local` means: the mesh's own, whatever it is called. */
export const DEFAULT_TRUST_DOMAIN = 'cluster.local';

/**
 * Expands source principals (`<td>/ns/<ns>/sa/<sa>`) to the mesh trust domain and its aliases,
 * as the reference does before building RBAC: a principal naming `cluster.local` or any domain of
 * the bundle matches the same workload under every domain of the bundle. Principals that do not
 * name a trust domain (a `*` domain, or not of the five-part form) are kept as written.
 */
export function expandTrustDomainAliases(principals: readonly string[], bundle: readonly string[]): string[] {
  if (bundle.length === 0) return [...principals];
  const out: string[] = [];
  const add = (value: string): void => {
    if (!out.includes(value)) out.push(value);
  };
  for (const principal of principals) {
    const parts = principal.split('/');
    const domain = parts[0] ?? '';
    if (parts.length !== 5 || domain === '*' || domain === '') {
      add(principal);
      continue;
    }
    const rest = parts.slice(1).join('/');
    const wildcard = domain.startsWith('*') ? domain.slice(1) : undefined;
    const known = wildcard !== undefined ? bundle.some((td) => td.endsWith(wildcard)) : bundle.includes(domain) || domain === DEFAULT_TRUST_DOMAIN;
    if (!known) {
      add(principal);
      continue;
    }
    for (const td of bundle) {
      // A wildcard domain that already covers this alias is kept as written.
      if (wildcard !== undefined ? td.endsWith(wildcard) : td === domain) add(principal);
      else add(`${td}/${rest}`);
    }
  }
  return out;
}

/**
 * Expands trust-domain values (`trustDomains`, `notTrustDomains`, `when source.trustDomain`) as
 * the reference does: a value naming the mesh trust domain or one of its aliases stands for all
 * of them, in both directions; any other value, wildcards included, is kept as written.
 */
export function expandTrustDomainValues(values: readonly string[], bundle: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    for (const domain of bundle.includes(value) ? bundle : [value]) if (!out.includes(domain)) out.push(domain);
  }
  return out;
}
