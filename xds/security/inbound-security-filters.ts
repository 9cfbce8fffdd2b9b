import { resolveExtAuthzProvider, type ExtAuthzProviderResolution } from '../../crds/index.js';
import type { PushContext } from '../model/push-context.js';
import type { SecurityFilterInput, SecurityFilters, TypedFilter } from '../model/security-filters.js';
import { buildCustomAuthz, type CustomProblem } from './ext-authz-builder.js';
import { buildJwtAuthnFilter, type JwksSource, type JwtAuthnOptions } from './jwt-authn-builder.js';
import { buildRbac } from './rbac-builder.js';

/** `--plugins`: the security filters the daemon generates (a plugin left out is not generated, as the reference does). */
export const SECURITY_PLUGINS = ['ext_authz', 'authn', 'authz'] as const;
export type SecurityPlugin = (typeof SECURITY_PLUGINS)[number];

export interface InboundSecurityFiltersOptions extends JwtAuthnOptions {
  readonly jwks: JwksSource;
  /** Default: all of them. */
  readonly plugins?: readonly string[];
  /** Told of every CUSTOM policy whose provider cannot be used (its rules are then denied). */
  readonly onCustomProblem?: (problem: CustomProblem) => void;
}

/** The providers a push's CUSTOM policies name, resolved once per push. */
function newProviderResolver(): (push: PushContext) => (provider: string) => ExtAuthzProviderResolution {
  const byPush = new WeakMap<PushContext, Map<string, ExtAuthzProviderResolution>>();
  return (push) => {
    let resolved = byPush.get(push);
    if (!resolved) byPush.set(push, (resolved = new Map()));
    const cache = resolved;
    return (provider) => {
      let resolution = cache.get(provider);
      if (!resolution) {
        const servicesByHost = (hostname: string): readonly { hostname: string; namespace: string }[] => {
          const service = push.serviceByHost.get(hostname);
          return service ? [service] : [];
        };
        resolution = resolveExtAuthzProvider(provider, push.meshConfig.extensionProviders, servicesByHost);
        cache.set(provider, resolution);
      }
      return resolution;
    };
  };
}

/**
 * The policy filters of a port, in the reference's order: the CUSTOM pairs (shadow RBAC and
 * ext_authz, per provider), jwt_authn (HTTP), then the AUDIT, DENY and ALLOW RBAC filters of the
 * AuthorizationPolicies that select the workload. `plugins` leaves out CUSTOM (`ext_authz`),
 * jwt_authn (`authn`) or the local RBAC (`authz`).
 */
export function newInboundSecurityFilters(options: InboundSecurityFiltersOptions): SecurityFilters {
  const plugins = new Set(options.plugins ?? SECURITY_PLUGINS);
  const providersOf = newProviderResolver();
  const reported = new WeakMap<PushContext, Set<string>>();

  const report = (push: PushContext, problems: readonly CustomProblem[]): void => {
    if (!options.onCustomProblem || problems.length === 0) return;
    let seen = reported.get(push);
    if (!seen) reported.set(push, (seen = new Set()));
    for (const problem of problems) {
      const key = `${problem.policy}\n${problem.provider}`;
      if (seen.has(key)) continue;
      seen.add(key);
      options.onCustomProblem(problem);
    }
  };

  const authorizationFor = (input: SecurityFilterInput, forTcp: boolean): { custom: TypedFilter[]; local: TypedFilter[] } => {
    const policies = input.push.authorizationPolicies.forWorkload(input.namespace, input.labels);
    if (policies.length === 0) return { custom: [], local: [] };
    const trust = { trustDomain: input.push.meshConfig.trustDomain, trustDomainAliases: input.push.meshConfig.trustDomainAliases, forTcp };
    let custom: TypedFilter[] = [];
    if (plugins.has('ext_authz')) {
      const built = buildCustomAuthz(policies, { ...trust, resolve: providersOf(input.push) });
      report(input.push, built.problems);
      custom = [...built.filters];
    }
    const local = plugins.has('authz') ? (buildRbac(policies, trust).filters as unknown as TypedFilter[]) : [];
    return { custom, local };
  };
  return {
    http(input) {
      const { custom, local } = authorizationFor(input, false);
      const jwt = plugins.has('authn') ? buildJwtAuthnFilter(input, input.push.requestAuthentications, options.jwks, options) : undefined;
      return [...custom, ...(jwt ? [jwt] : []), ...local];
    },
    tcp(input) {
      const { custom, local } = authorizationFor(input, true);
      return [...custom, ...local];
    },
  };
}
