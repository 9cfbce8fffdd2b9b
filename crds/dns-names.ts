const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const WILDCARD_LABEL = /^(\*|(\*|\*-)?[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)$/;
const HOST_LABEL = /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$/;

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;

/** A Kubernetes namespace or label-like name: lowercase alphanumerics and '-', at most 63 characters. */
export function isDns1123Label(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX && DNS1123_LABEL.test(value);
}

/** A DNS label in either case, as subset names and host labels take. */
export function isDnsLabel(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX && HOST_LABEL.test(value);
}

/** A Kubernetes object name: DNS-1123 labels joined by dots, at most 253 characters. */
export function isDns1123Subdomain(value: string): boolean {
  return value.length <= DNS1123_SUBDOMAIN_MAX && value.split('.').every((label) => DNS1123_LABEL.test(label));
}

/**
 * Why a host name is not acceptable, or undefined when it is. Hosts are DNS names whose first label
 * may be a wildcard (`*`, `*.example.com`, `*foo.example.com`); a trailing dot is allowed and the
 * top-level label cannot be all digits (that would be an IP address).
 */
export function hostNameProblem(host: string): string | undefined {
  if (host.length === 0) return 'expected a non-empty host name';
  if (host.length > 255) return `expected a host name of at most 255 characters, got ${host.length}`;
  const [first = '', ...rest] = host.split('.');
  if (!WILDCARD_LABEL.test(first) || first.length > DNS1123_LABEL_MAX) {
    return `expected a DNS name whose first label may be a wildcard (such as *.example.com), got "${host}" (label "${first}" is invalid)`;
  }
  if (rest.length === 0) return undefined;
  const last = rest[rest.length - 1] ?? '';
  if (/^[0-9]+$/.test(last)) {
    return `expected a DNS name whose top-level label is not all digits, got "${host}"`;
  }
  for (let i = 0; i < rest.length; i++) {
    const label = rest[i] ?? '';
    if (i === rest.length - 1 && label === '') return undefined;
    if (label.length > DNS1123_LABEL_MAX || !HOST_LABEL.test(label)) {
      return `expected a DNS name whose labels use letters, digits and '-', got "${host}" (label "${label}" is invalid)`;
    }
  }
  return undefined;
}

/** A fully qualified name without wildcards, such as a tunnel target host. */
export function isFqdn(host: string): boolean {
  return !host.includes('*') && hostNameProblem(host) === undefined;
}

/**
 * Whether `a` is matched by `b` when both are hosts that may start with a wildcard label
 * (`foo.example.com` is a subset of `*.example.com`; `*` covers everything).
 */
export function isHostSubsetOf(a: string, b: string): boolean {
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  if (right === '*') return true;
  if (right.startsWith('*')) {
    const suffix = right.slice(1);
    if (left.startsWith('*')) return left.slice(1).endsWith(suffix);
    return left.endsWith(suffix) && left.length > suffix.length;
  }
  return left === right;
}

/** Whether two hosts overlap, so that one VirtualService listing both would be ambiguous. */
export function hostsOverlap(a: string, b: string): boolean {
  return isHostSubsetOf(a, b) || isHostSubsetOf(b, a);
}
