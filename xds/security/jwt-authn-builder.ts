import type { JwtRule, RequestAuthentication } from '../../crds/index.js';
import type { SecurityFilterInput, TypedFilter } from '../model/security-filters.js';
import { JWT_FILTER_NAME, JWT_PAYLOAD_KEY } from './authz-rule-model.js';
import type { PolicyIndex } from '../model/policy-index.js';
import type { PushContext } from '../model/push-context.js';
import { envoyDuration } from '../envoy/envoy-duration.js';
import { outboundClusterName } from '../model/cluster-names.js';

export const JWT_AUTHN_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication';

/** Where the key set of an issuer comes from: fetched by the daemon and inlined. */
export interface JwksSource {
  /** The key set (JSON) to inline for a rule: its `jwks`, the fetched set, or a set that verifies nothing. */
  keySetFor(rule: JwtRule): string;
}

/** PILOT_JWT_ENABLE_REMOTE_JWKS: key sets of mesh Services are fetched by the proxy, the others by the daemon. */
export interface JwtAuthnOptions {
  readonly remoteJwks?: boolean;
}

const DEFAULT_SPACE_DELIMITED = ['permission', 'scope'];
const DEFAULT_FETCH_TIMEOUT = { seconds: 5 } as const;
/** The reference's remote key set lifetime at the proxy. */
const REMOTE_CACHE_DURATION = { seconds: 300 } as const;

/**
 * Where a rule's key set comes from, as the reference's hybrid mode decides: with `jwksUri` whose
 * host is a mesh Service, the proxy fetches it through that Service's cluster
 * (`outbound|<port>||<host>`, the URI's port or its scheme's) and keeps it 5 minutes; otherwise
 * the daemon's fetched (or the rule's inline) set is inlined.
 */
function jwksSourceOf(rule: JwtRule, push: PushContext, jwks: JwksSource, options: JwtAuthnOptions): Record<string, unknown> {
  const cluster = options.remoteJwks && rule.jwksUri ? meshClusterOf(rule.jwksUri, push) : undefined;
  if (!cluster || !rule.jwksUri) return { local_jwks: { inline_string: jwks.keySetFor(rule) } };
  const timeout = (rule.timeout === undefined ? undefined : envoyDuration(rule.timeout)) ?? DEFAULT_FETCH_TIMEOUT;
  return { remote_jwks: { http_uri: { uri: rule.jwksUri, cluster, timeout }, cache_duration: REMOTE_CACHE_DURATION } };
}

function meshClusterOf(uri: string, push: PushContext): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  const service = push.serviceByHost.get(url.hostname);
  if (!service) return undefined;
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return outboundClusterName(port, '', service.hostname);
}

function provider(rule: JwtRule, push: PushContext, jwks: JwksSource, options: JwtAuthnOptions): Record<string, unknown> {
  const headers = (rule.fromHeaders ?? []).map((header) => ({ name: header.name, ...(header.prefix ? { value_prefix: header.prefix } : {}) }));
  return {
    ...(rule.issuer ? { issuer: rule.issuer } : {}),
    ...(rule.audiences && rule.audiences.length > 0 ? { audiences: rule.audiences } : {}),
    ...jwksSourceOf(rule, push, jwks, options),
    ...(rule.forwardOriginalToken ? { forward: true } : {}),
    ...(headers.length > 0 ? { from_headers: headers } : {}),
    ...(rule.fromParams && rule.fromParams.length > 0 ? { from_params: rule.fromParams } : {}),
    ...(rule.fromCookies && rule.fromCookies.length > 0 ? { from_cookies: rule.fromCookies } : {}),
    ...(rule.outputPayloadToHeader ? { forward_payload_header: rule.outputPayloadToHeader } : {}),
    ...(rule.outputClaimToHeaders && rule.outputClaimToHeaders.length > 0
      ? { claim_to_headers: rule.outputClaimToHeaders.map((entry) => ({ header_name: entry.header, claim_name: entry.claim })) }
      : {}),
    payload_in_metadata: JWT_PAYLOAD_KEY,
    normalize_payload_in_metadata: { space_delimited_claims: [...new Set([...DEFAULT_SPACE_DELIMITED, ...(rule.spaceDelimitedClaims ?? [])])].sort() },
  };
}

/**
 * The jwt_authn filter of a workload or gateway port: every JWT rule of the RequestAuthentications
 * that apply, sorted by issuer, providers `origins-<i>`; a missing token passes, an invalid one is
 * refused by the filter itself (401); requiring a token is left to AuthorizationPolicy. Undefined
 * when no rule applies.
 */
export function buildJwtAuthnFilter(
  input: SecurityFilterInput,
  policies: PolicyIndex<RequestAuthentication>,
  jwks: JwksSource,
  options: JwtAuthnOptions = {},
): TypedFilter | undefined {
  const rules = policies
    .forWorkload(input.namespace, input.labels)
    .flatMap((policy) => policy.spec.jwtRules ?? [])
    .sort((a, b) => ((a.issuer ?? '') < (b.issuer ?? '') ? -1 : (a.issuer ?? '') > (b.issuer ?? '') ? 1 : 0));
  if (rules.length === 0) return undefined;
  const providers = Object.fromEntries(rules.map((rule, index) => [`origins-${index}`, provider(rule, input.push, jwks, options)]));
  const names = Object.keys(providers);
  const requirement =
    names.length === 1
      ? { requires_any: { requirements: [{ provider_name: names[0] }, { allow_missing: {} }] } }
      : {
          requires_any: {
            requirements: [
              ...names.map((name) => ({ provider_name: name })),
              { requires_all: { requirements: names.map((name) => ({ requires_any: { requirements: [{ provider_name: name }, { allow_missing: {} }] } })) } },
            ],
          },
        };
  return {
    name: JWT_FILTER_NAME,
    typed_config: {
      '@type': JWT_AUTHN_TYPE,
      providers,
      rules: [{ match: { prefix: '/' }, requires: requirement }],
      bypass_cors_preflight: true,
    },
  };
}
