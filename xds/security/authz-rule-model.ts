import type { AuthorizationRule } from '../../crds/index.js';
import {
  cidrRange,
  escapeRegex,
  headerMatcher,
  metadataListMatcher,
  metadataMatcher,
  orValueMatcher,
  regexMatcher,
  stringOrMatcher,
  wildcardMatcher,
  type StringMatcher,
  type ValueMatcher,
} from './envoy-matchers.js';
import {
  permissionAnd,
  permissionAny,
  permissionNot,
  permissionOr,
  principalAnd,
  principalAny,
  principalNot,
  principalOr,
  type RbacAction,
  type RbacPermission,
  type RbacPolicy,
  type RbacPrincipal,
} from './rbac-types.js';
import { expandTrustDomainAliases, expandTrustDomainValues } from './trust-domain-aliases.js';

/** The filter whose dynamic metadata holds the verified JWT payload (under `payload`). */
export const JWT_FILTER_NAME = 'envoy.filters.http.jwt_authn';
export const JWT_PAYLOAD_KEY = 'payload';
export const URI_TEMPLATE_TYPE_URL = 'type.googleapis.com/envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig';

/** Why a value produced no matcher: it is HTTP-only on a TCP chain, or malformed. */
interface Problem {
  readonly problem: string;
  readonly httpOnly?: true;
}
type Generated<T> = T | Problem | undefined;

const isProblem = <T>(value: Generated<T>): value is Problem => typeof value === 'object' && value !== null && 'problem' in value;

/** Turns the values of one field into matchers: one value at a time, or all at once (`all`). */
interface Generator<T> {
  one?(key: string, value: string, forTcp: boolean): Generated<T>;
  all?(key: string, values: readonly string[], forTcp: boolean): Generated<T>;
}

interface Field<T> {
  readonly key: string;
  readonly values: readonly string[];
  readonly notValues: readonly string[];
  readonly generator: Generator<T>;
}

const httpOnly = (key: string): Problem => ({ problem: `"${key}" is HTTP only`, httpOnly: true });

function authenticated(matcher: StringMatcher): RbacPrincipal {
  return { authenticated: { principal_name: matcher } };
}

function jwtClaim(claim: string, matcher: StringMatcher): RbacPrincipal {
  return { metadata: metadataMatcher(JWT_FILTER_NAME, [JWT_PAYLOAD_KEY, claim], { string_match: matcher }) };
}

function jwtClaims(path: readonly string[], values: readonly string[]): RbacPrincipal {
  return { metadata: metadataListMatcher(JWT_FILTER_NAME, [JWT_PAYLOAD_KEY, ...path], stringOrMatcher(values)) };
}

/**
 * `*` inside a user string becomes `[^/]*`; the rest is literal. A wildcard in a trust domain or
 * namespace thus stays inside its segment of the SPIFFE ID: `*-td` never matches the namespace
 * `my-td` of `spiffe://cluster.local/ns/my-td/...`.
 */
function segmentWildcardRegex(value: string): string {
  return value.split('*').map(escapeRegex).join('[^/]*');
}

function bracketed(key: string, base: string): string[] | undefined {
  const rest = key.slice(base.length);
  const names: string[] = [];
  const pattern = /\[([^[\]]+)\]/gy;
  let match: RegExpExecArray | null;
  let end = 0;
  while ((match = pattern.exec(rest)) !== null) {
    names.push(match[1] as string);
    end = pattern.lastIndex;
  }
  return names.length > 0 && end === rest.length ? names : undefined;
}

const anyIssuerOrSubject = (): StringMatcher => regexMatcher('.+');

/** `iss/sub` split at the last `/` (issuers are often URLs), with `*` on either end. */
function requestPrincipal(value: string): RbacPrincipal {
  const slash = value.lastIndexOf('/');
  const found = slash >= 0;
  const iss = found ? value.slice(0, slash) : value;
  const sub = found ? value.slice(slash + 1) : '';
  let matchIss: StringMatcher;
  let matchSub: StringMatcher;
  if (value === '*') {
    matchIss = anyIssuerOrSubject();
    matchSub = anyIssuerOrSubject();
  } else if (value.startsWith('*')) {
    if (found) {
      matchIss = iss === '*' ? anyIssuerOrSubject() : { suffix: iss.slice(1) };
      matchSub = { exact: sub };
    } else {
      matchIss = anyIssuerOrSubject();
      matchSub = { suffix: value.slice(1) };
    }
  } else if (value.endsWith('*')) {
    if (found) {
      matchIss = { exact: iss };
      matchSub = sub === '*' ? anyIssuerOrSubject() : { prefix: sub.slice(0, -1) };
    } else {
      matchIss = { prefix: value.slice(0, -1) };
      matchSub = anyIssuerOrSubject();
    }
  } else {
    matchIss = { exact: iss };
    matchSub = { exact: sub };
  }
  return principalAnd([jwtClaim('iss', matchIss), jwtClaim('sub', matchSub)]);
}

/**
 * A principal (`<td>/ns/<ns>/sa/<sa>`, or any string with a `*` at an end) as a match on the
 * peer's SPIFFE ID. As the reference, but a leading `*` in the trust domain of a five-part
 * principal covers the trust domain only: `*-td/ns/a/sa/b` does not match
 * `spiffe://cluster.local/ns/x-td/ns/a/sa/b`.
 */
function principalMatcher(value: string): StringMatcher {
  const parts = value.split('/');
  const domain = parts[0] ?? '';
  if (value === '*' || parts.length !== 5 || !domain.startsWith('*')) return wildcardMatcher(value, 'spiffe://');
  const domainRegex = domain === '*' ? '[^/]+' : `[^/]*${escapeRegex(domain.slice(1))}`;
  return regexMatcher(`spiffe://${domainRegex}/${escapeRegex(parts.slice(1).join('/'))}`);
}

const principalsGenerator: Generator<RbacPrincipal> = {
  one: (_key, value) => authenticated(principalMatcher(value)),
};

const requestPrincipalsGenerator: Generator<RbacPrincipal> = {
  all(key, values, forTcp) {
    if (forTcp) return httpOnly(key);
    const ids = values.map(requestPrincipal);
    if (ids.length === 0) return undefined;
    return ids.length === 1 ? ids[0] : principalOr(ids);
  },
};

function serviceAccountsGenerator(policyNamespace: string): Generator<RbacPrincipal> {
  return {
    one(_key, value) {
      const slash = value.indexOf('/');
      const namespace = slash < 0 ? policyNamespace : value.slice(0, slash);
      const account = slash < 0 ? value : value.slice(slash + 1);
      return authenticated(regexMatcher(`spiffe://.+/ns/${escapeRegex(namespace)}/(.+/|)sa/${escapeRegex(account)}(/.+)?`));
    },
  };
}

/** Validation refuses these; a policy that reached the builder without it still never widens a match. */
function trustDomainValueProblem(value: string): Problem | undefined {
  const stars = value.split('*').length - 1;
  const starOk = stars === 0 || value === '*' || (stars === 1 && (value.startsWith('*') || value.endsWith('*')));
  return value !== '' && starOk && !value.includes('/') ? undefined : { problem: `invalid trust domain "${value}"` };
}

/** As the reference: `*` any SPIFFE ID, a name its prefix, one `*` at an end a regex whose wildcard stays in the trust domain. */
const trustDomainsGenerator: Generator<RbacPrincipal> = {
  one(_key, value) {
    const problem = trustDomainValueProblem(value);
    if (problem) return problem;
    if (value === '*') return authenticated({ prefix: 'spiffe://' });
    if (!value.includes('*')) return authenticated({ prefix: `spiffe://${value}/` });
    return authenticated(regexMatcher(`spiffe://${segmentWildcardRegex(value)}/.*`));
  },
};

/** Any trust domain, as the reference; a `*` stays inside the namespace segment and a namespace never holds a `/`. */
const namespacesGenerator: Generator<RbacPrincipal> = {
  one(_key, value) {
    if (value === '' || value.includes('/')) return { problem: `invalid namespace "${value}"` };
    return authenticated(regexMatcher(`.*/ns/${segmentWildcardRegex(value)}/.*`));
  },
};

const directRemoteIpGenerator: Generator<RbacPrincipal> = {
  one(_key, value) {
    const cidr = cidrRange(value);
    return cidr ? { direct_remote_ip: cidr } : { problem: `invalid IP address or CIDR range "${value}"` };
  },
};

const remoteIpGenerator: Generator<RbacPrincipal> = {
  one(_key, value) {
    const cidr = cidrRange(value);
    return cidr ? { remote_ip: cidr } : { problem: `invalid IP address or CIDR range "${value}"` };
  },
};

const requestHeaderGenerator: Generator<RbacPrincipal> = {
  one(key, value, forTcp) {
    if (forTcp) return httpOnly(key);
    const names = bracketed(key, 'request.headers');
    if (names?.length !== 1) return { problem: `expected request.headers[<name>], got "${key}"` };
    return { header: headerMatcher(names[0] as string, value) };
  },
};

function jwtListGenerator(path: (key: string) => string[] | undefined): Generator<RbacPrincipal> {
  return {
    all(key, values, forTcp) {
      if (forTcp) return httpOnly(key);
      const claims = path(key);
      if (!claims) return { problem: `expected request.auth.claims[<name>], got "${key}"` };
      return jwtClaims(claims, values);
    },
  };
}

const hostsGenerator: Generator<RbacPermission> = {
  one: (key, value, forTcp) => (forTcp ? httpOnly(key) : { header: headerMatcher(':authority', value, true) }),
};

const methodsGenerator: Generator<RbacPermission> = {
  one: (key, value, forTcp) => (forTcp ? httpOnly(key) : { header: headerMatcher(':method', value) }),
};

const pathsGenerator: Generator<RbacPermission> = {
  one(key, value, forTcp) {
    if (forTcp) return httpOnly(key);
    if (value.includes('{*}') || value.includes('{**}')) {
      const pathTemplate = value.replaceAll('{**}', '**').replaceAll('{*}', '*');
      return { uri_template: { name: 'uri-template', typed_config: { '@type': URI_TEMPLATE_TYPE_URL, path_template: pathTemplate } } };
    }
    return { url_path: { path: wildcardMatcher(value) } };
  },
};

const portsGenerator: Generator<RbacPermission> = {
  one(_key, value) {
    const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
    return port >= 0 && port <= 65535 ? { destination_port: port } : { problem: `invalid port "${value}"` };
  },
};

const destinationIpGenerator: Generator<RbacPermission> = {
  one(_key, value) {
    const cidr = cidrRange(value);
    return cidr ? { destination_ip: cidr } : { problem: `invalid IP address or CIDR range "${value}"` };
  },
};

const sniGenerator: Generator<RbacPermission> = {
  one: (_key, value) => ({ requested_server_name: wildcardMatcher(value) }),
};

/** `experimental.envoy.filters.a.b[c]`: metadata `c` of filter `envoy.filters.a.b`; a value `[v]` matches a list element. */
const envoyFilterGenerator: Generator<RbacPermission> = {
  all(key, values) {
    const inner = key.slice('experimental.'.length);
    const open = inner.indexOf('[');
    if (open <= 0 || !inner.endsWith(']')) return { problem: `invalid key "${key}"` };
    const filter = inner.slice(0, open);
    const field = inner.slice(open + 1, -1);
    const matchers: ValueMatcher[] = values.map((value) =>
      value.startsWith('[') && value.endsWith(']')
        ? { list_match: { one_of: { string_match: wildcardMatcher(value.slice(1, -1)) } } }
        : { string_match: wildcardMatcher(value) },
    );
    return { metadata: metadataMatcher(filter, [field], orValueMatcher(matchers)) };
  },
};

/** How one side (principal or permission) is assembled from its fields. */
interface Side<T> {
  any(): T;
  and(items: T[]): T;
  or(items: T[]): T;
  not(item: T): T;
}

const PRINCIPAL_SIDE: Side<RbacPrincipal> = { any: principalAny, and: principalAnd, or: principalOr, not: principalNot };
const PERMISSION_SIDE: Side<RbacPermission> = { any: permissionAny, and: permissionAnd, or: permissionOr, not: permissionNot };

/**
 * An error on an ALLOW rule drops the whole rule (it allows less); on DENY and AUDIT only the
 * value is dropped (the rule denies or audits more). Both fail safe.
 */
function fieldMatchers<T>(field: Field<T>, side: Side<T>, forTcp: boolean, action: RbacAction): T[] | Problem {
  const out: T[] = [];
  const collect = (values: readonly string[], negate: boolean): Problem | undefined => {
    if (values.length === 0) return undefined;
    const items: T[] = [];
    if (field.generator.all) {
      const generated = field.generator.all(field.key, values, forTcp);
      if (isProblem(generated)) {
        if (action === 'ALLOW') return generated;
      } else if (generated !== undefined) items.push(generated);
      if (items.length > 0) out.push(negate ? side.not(items[0] as T) : (items[0] as T));
      return undefined;
    }
    for (const value of values) {
      const generated = field.generator.one?.(field.key, value, forTcp);
      if (isProblem(generated)) {
        if (action === 'ALLOW') return generated;
      } else if (generated !== undefined) items.push(generated);
    }
    if (items.length > 0) out.push(negate ? side.not(side.or(items)) : side.or(items));
    return undefined;
  };
  return collect(field.values, false) ?? collect(field.notValues, true) ?? out;
}

function assemble<T>(fields: readonly Field<T>[], side: Side<T>, forTcp: boolean, action: RbacAction): T | Problem {
  const and: T[] = [];
  for (const field of fields) {
    const matchers = fieldMatchers(field, side, forTcp, action);
    if (isProblem(matchers)) return matchers;
    and.push(...matchers);
  }
  return side.and(and.length > 0 ? and : [side.any()]);
}

function field<T>(key: string, generator: Generator<T>, values?: readonly string[], notValues?: readonly string[]): Field<T>[] {
  if (!values?.length && !notValues?.length) return [];
  return [{ key, generator, values: values ?? [], notValues: notValues ?? [] }];
}

export interface RuleContext {
  /** The namespace of the policy (the default namespace of `serviceAccounts` values). */
  readonly policyNamespace: string;
  /** The mesh trust domain followed by its aliases. */
  readonly trustDomains: readonly string[];
}

/** `httpOnly`: the rule was dropped for a field a TCP connection cannot answer. */
export type RuleResult = { ok: true; policy: RbacPolicy } | { ok: false; problem: string; httpOnly?: true };

/**
 * One AuthorizationPolicy rule as an Envoy RBAC policy: one principal per `from` entry and one
 * permission per `to` entry (Envoy ORs each list), each an AND over its fields; `when` conditions
 * are added to every principal or permission, by what they test.
 */
export function buildRulePolicy(rule: AuthorizationRule, context: RuleContext, forTcp: boolean, action: RbacAction): RuleResult {
  const principalWhen: Field<RbacPrincipal>[] = [];
  const permissionWhen: Field<RbacPermission>[] = [];
  const aliases = (values?: readonly string[]): string[] | undefined => values && expandTrustDomainAliases(values, context.trustDomains);
  const domains = (values?: readonly string[]): string[] | undefined => values && expandTrustDomainValues(values, context.trustDomains);

  for (const condition of rule.when ?? []) {
    const { key, values, notValues } = condition;
    if (key === 'destination.ip') permissionWhen.push(...field(key, destinationIpGenerator, values, notValues));
    else if (key === 'destination.port') permissionWhen.push(...field(key, portsGenerator, values, notValues));
    else if (key === 'connection.sni') permissionWhen.push(...field(key, sniGenerator, values, notValues));
    else if (key.startsWith('experimental.envoy.filters.')) permissionWhen.push(...field(key, envoyFilterGenerator, values, notValues));
    else if (key === 'source.ip') principalWhen.push(...field(key, directRemoteIpGenerator, values, notValues));
    else if (key === 'remote.ip') principalWhen.push(...field(key, remoteIpGenerator, values, notValues));
    else if (key === 'source.namespace') principalWhen.push(...field(key, namespacesGenerator, values, notValues));
    else if (key === 'source.serviceAccount') principalWhen.push(...field(key, serviceAccountsGenerator(context.policyNamespace), values, notValues));
    else if (key === 'source.trustDomain') principalWhen.push(...field(key, trustDomainsGenerator, domains(values), domains(notValues)));
    else if (key === 'source.principal') principalWhen.push(...field(key, principalsGenerator, aliases(values), aliases(notValues)));
    else if (key === 'request.auth.principal') principalWhen.push(...field(key, requestPrincipalsGenerator, values, notValues));
    else if (key === 'request.auth.audiences')
      principalWhen.push(
        ...field(
          key,
          jwtListGenerator(() => ['aud']),
          values,
          notValues,
        ),
      );
    else if (key === 'request.auth.presenter')
      principalWhen.push(
        ...field(
          key,
          jwtListGenerator(() => ['azp']),
          values,
          notValues,
        ),
      );
    else if (key.startsWith('request.headers')) principalWhen.push(...field(key, requestHeaderGenerator, values, notValues));
    else if (key.startsWith('request.auth.claims'))
      principalWhen.push(
        ...field(
          key,
          jwtListGenerator((k) => bracketed(k, 'request.auth.claims')),
          values,
          notValues,
        ),
      );
    else return { ok: false, problem: `unknown attribute ${key}` };
  }

  const principalLists: Field<RbacPrincipal>[][] = (rule.from?.length ? rule.from : [undefined]).map((from) => {
    const s = from?.source;
    if (!s) return principalWhen;
    return [
      ...field('source.principal', principalsGenerator, aliases(s.principals), aliases(s.notPrincipals)),
      ...field('request.auth.principal', requestPrincipalsGenerator, s.requestPrincipals, s.notRequestPrincipals),
      ...field('source.serviceAccount', serviceAccountsGenerator(context.policyNamespace), s.serviceAccounts, s.notServiceAccounts),
      ...field('source.trustDomain', trustDomainsGenerator, domains(s.trustDomains), domains(s.notTrustDomains)),
      ...field('source.namespace', namespacesGenerator, s.namespaces, s.notNamespaces),
      ...field('remote.ip', remoteIpGenerator, s.remoteIpBlocks, s.notRemoteIpBlocks),
      ...field('source.ip', directRemoteIpGenerator, s.ipBlocks, s.notIpBlocks),
      ...principalWhen,
    ];
  });
  const permissionLists: Field<RbacPermission>[][] = (rule.to?.length ? rule.to : [undefined]).map((to) => {
    const o = to?.operation;
    if (!o) return permissionWhen;
    return [
      ...field('hosts', hostsGenerator, o.hosts, o.notHosts),
      ...field('methods', methodsGenerator, o.methods, o.notMethods),
      ...field('paths', pathsGenerator, o.paths, o.notPaths),
      ...field('destination.port', portsGenerator, o.ports, o.notPorts),
      ...permissionWhen,
    ];
  });

  const permissions: RbacPermission[] = [];
  for (const fields of permissionLists) {
    const permission = assemble(fields, PERMISSION_SIDE, forTcp, action);
    if (isProblem(permission)) return { ok: false, ...permission };
    permissions.push(permission);
  }
  const principals: RbacPrincipal[] = [];
  for (const fields of principalLists) {
    const principal = assemble(fields, PRINCIPAL_SIDE, forTcp, action);
    if (isProblem(principal)) return { ok: false, ...principal };
    principals.push(principal);
  }
  return { ok: true, policy: { permissions, principals } };
}
