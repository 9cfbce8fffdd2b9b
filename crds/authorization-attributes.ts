import { isIpOrCidr } from './ip-address.js';

/**
 * The attributes an AuthorizationPolicy `when` condition may test, and how their values are checked.
 * Keys in brackets name a header, claim or filter-specific field: `request.headers[x-token]`.
 */
type AttributeRule = {
  readonly key: string;
  readonly bracketed?: boolean;
  readonly values?: (value: string) => string | undefined;
  /** Only present in HTTP requests: on TCP ports a condition on it cannot be evaluated. */
  readonly httpOnly?: boolean;
  /** Rejected with action CUSTOM (the external authorizer decides on identity). */
  readonly notForCustom?: boolean;
};

export function ipOrCidrProblem(value: string): string | undefined {
  return isIpOrCidr(value) ? undefined : `expected an IP address or CIDR range such as 10.0.0.0/16, got "${value}"`;
}

export function portProblem(value: string): string | undefined {
  const port = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  return port >= 1 && port <= 65535 ? undefined : `expected a port number from 1 to 65535, got "${value}"`;
}

export function serviceAccountProblem(value: string): string | undefined {
  const parts = value.split('/');
  const ok = !value.includes('*') && parts.length <= 2 && parts.every((part) => part !== '');
  return ok ? undefined : `expected a service account as "name" or "namespace/name" without wildcards, got "${value}"`;
}

export function trustDomainProblem(value: string): string | undefined {
  const stars = value.split('*').length - 1;
  const starOk = stars === 0 || value === '*' || (stars === 1 && (value.startsWith('*') || value.endsWith('*')));
  return starOk && !value.includes('/') ? undefined : `expected a trust domain with at most one '*' at its start or end and no '/', got "${value}"`;
}

const ATTRIBUTES: readonly AttributeRule[] = [
  { key: 'request.headers', bracketed: true, httpOnly: true },
  { key: 'source.ip', values: ipOrCidrProblem },
  { key: 'remote.ip', values: ipOrCidrProblem },
  { key: 'source.namespace', notForCustom: true },
  { key: 'source.principal', notForCustom: true },
  { key: 'source.serviceAccount', values: serviceAccountProblem, notForCustom: true },
  { key: 'source.trustDomain', values: trustDomainProblem, notForCustom: true },
  { key: 'request.auth.principal', httpOnly: true, notForCustom: true },
  { key: 'request.auth.audiences', httpOnly: true, notForCustom: true },
  { key: 'request.auth.presenter', httpOnly: true, notForCustom: true },
  { key: 'request.auth.claims', bracketed: true, httpOnly: true, notForCustom: true },
  { key: 'destination.ip', values: ipOrCidrProblem },
  { key: 'destination.port', values: portProblem },
  { key: 'connection.sni' },
];

const EXPERIMENTAL_PREFIX = 'experimental.envoy.filters.';

export const SUPPORTED_ATTRIBUTES =
  'request.headers[<name>], source.ip, remote.ip, source.namespace, source.principal, source.serviceAccount, ' +
  'source.trustDomain, request.auth.principal, request.auth.audiences, request.auth.presenter, ' +
  'request.auth.claims[<name>], destination.ip, destination.port, connection.sni or experimental.envoy.filters.<filter>[<field>]';

export type AttributeCheck =
  { ok: true; httpOnly: boolean; notForCustom: boolean; values?: (value: string) => string | undefined } | { ok: false; problem: string };

function bracketedProblem(key: string, base: string): string | undefined {
  const rest = key.slice(base.length);
  return /^\[.+\]$/.test(rest) ? undefined : `expected the form ${base}[<name>], got "${key}"`;
}

/** What a `when` key means, or why it is not accepted. */
export function checkAttribute(key: string): AttributeCheck {
  if (key.startsWith(EXPERIMENTAL_PREFIX)) {
    const open = key.indexOf('[');
    if (open <= EXPERIMENTAL_PREFIX.length || !key.endsWith(']') || open >= key.length - 2) {
      return { ok: false, problem: `expected the form ${EXPERIMENTAL_PREFIX}<filter>[<field>], got "${key}"` };
    }
    return { ok: true, httpOnly: false, notForCustom: false };
  }
  if (key === 'destination.namespace') {
    return {
      ok: false,
      problem: 'attribute destination.namespace is not supported: expected the policy namespace (metadata.namespace) to scope it',
    };
  }
  if (key.startsWith('destination.labels')) {
    return { ok: false, problem: `attribute ${key} is not supported: expected the selector to pick workloads by label` };
  }
  for (const rule of ATTRIBUTES) {
    const matches = rule.bracketed ? key === rule.key || key.startsWith(`${rule.key}[`) : key === rule.key;
    if (!matches) continue;
    if (rule.bracketed) {
      const problem = bracketedProblem(key, rule.key);
      if (problem !== undefined) return { ok: false, problem };
    }
    return {
      ok: true,
      httpOnly: rule.httpOnly ?? false,
      notForCustom: rule.notForCustom ?? false,
      ...(rule.values ? { values: rule.values } : {}),
    };
  }
  return { ok: false, problem: `unknown attribute "${key}": expected one of ${SUPPORTED_ATTRIBUTES}` };
}
