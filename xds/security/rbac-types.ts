import type { CidrRange, HeaderMatcher, MetadataMatcher, StringMatcher } from './envoy-matchers.js';

/** `envoy.config.rbac.v3.Principal`, snake_case, one member of its `identifier` oneof set. */
export type RbacPrincipal =
  | { any: true }
  | { and_ids: { ids: RbacPrincipal[] } }
  | { or_ids: { ids: RbacPrincipal[] } }
  | { not_id: RbacPrincipal }
  | { authenticated: { principal_name: StringMatcher } }
  | { direct_remote_ip: CidrRange }
  | { remote_ip: CidrRange }
  | { header: HeaderMatcher }
  | { metadata: MetadataMatcher };

/** `envoy.config.rbac.v3.Permission`, snake_case, one member of its `rule` oneof set. */
export type RbacPermission =
  | { any: true }
  | { and_rules: { rules: RbacPermission[] } }
  | { or_rules: { rules: RbacPermission[] } }
  | { not_rule: RbacPermission }
  | { header: HeaderMatcher }
  | { url_path: { path: StringMatcher } }
  | { uri_template: { name: string; typed_config: { '@type': string; path_template: string } } }
  | { destination_ip: CidrRange }
  | { destination_port: number }
  | { requested_server_name: StringMatcher }
  | { metadata: MetadataMatcher };

/** `envoy.config.rbac.v3.Policy`. */
export interface RbacPolicy {
  permissions: RbacPermission[];
  principals: RbacPrincipal[];
}

export type RbacAction = 'ALLOW' | 'DENY' | 'LOG';

/** `envoy.config.rbac.v3.RBAC`. */
export interface RbacRules {
  action: RbacAction;
  policies: Record<string, RbacPolicy>;
}

export const principalAny = (): RbacPrincipal => ({ any: true });
export const principalAnd = (ids: RbacPrincipal[]): RbacPrincipal => ({ and_ids: { ids } });
export const principalOr = (ids: RbacPrincipal[]): RbacPrincipal => ({ or_ids: { ids } });
export const principalNot = (id: RbacPrincipal): RbacPrincipal => ({ not_id: id });
export const permissionAny = (): RbacPermission => ({ any: true });
export const permissionAnd = (rules: RbacPermission[]): RbacPermission => ({ and_rules: { rules } });
export const permissionOr = (rules: RbacPermission[]): RbacPermission => ({ or_rules: { rules } });
export const permissionNot = (rule: RbacPermission): RbacPermission => ({ not_rule: rule });

/** The policy that matches nothing: what an authorization policy without `rules` becomes. */
export function matchNeverPolicy(): RbacPolicy {
  return { permissions: [permissionNot(permissionAny())], principals: [principalNot(principalAny())] };
}
