import { compileCidrRanges, type CidrRangeConfig } from './cidr.js';
import type { ConnectionFacts, DynamicMetadata, HttpRequestFacts } from './facts.js';
import { compileHeaderMatcher, type HeaderMatcherConfig } from './header-matcher.js';
import { compileMetadataMatcher, type MetadataMatcherConfig } from './metadata-matcher.js';
import { compileStringMatcher, type StringMatcherConfig } from './string-matcher.js';
import { compileUriTemplate } from './uri-template.js';
import { MeshError } from '../../runtime/index.js';

/** What RBAC rules are evaluated against. `request` is absent for the network filter. */
export interface RbacInput {
  readonly connection: ConnectionFacts;
  readonly request?: HttpRequestFacts;
  readonly metadata: DynamicMetadata;
}

type Predicate = (input: RbacInput) => boolean;

/** `envoy.config.rbac.v3.Principal` / `Permission`: loosely typed, every supported member checked at compile time. */
type RuleConfig = Record<string, unknown>;

export interface RbacRulesConfig {
  action?: 'ALLOW' | 'DENY' | 'LOG';
  policies?: Record<string, { permissions: RuleConfig[]; principals: RuleConfig[] }>;
}

/** `envoy.extensions.filters.{http,network}.rbac.v3.RBAC`. */
export interface RbacFilterConfig {
  rules?: RbacRulesConfig;
  shadow_rules?: RbacRulesConfig;
  stat_prefix?: string;
  shadow_rules_stat_prefix?: string;
}

export interface RbacVerdict {
  readonly allowed: boolean;
  /** The policy that matched, if any (the deny reason for DENY, the grant for ALLOW). */
  readonly matchedPolicy?: string;
  /** The shadow (dry-run) result, for stats only. */
  readonly shadow?: { readonly allowed: boolean; readonly matchedPolicy?: string };
  /**
   * What the filter writes into the dynamic metadata under its own name, as Envoy's RBAC filter
   * does for its shadow rules: `<shadow_rules_stat_prefix>shadow_engine_result` (`allowed` or
   * `denied`) and, when a shadow policy matched, `<shadow_rules_stat_prefix>shadow_effective_policy_id`.
   */
  readonly dynamicMetadata?: Readonly<Record<string, string>>;
}

export class RbacConfigError extends MeshError<'rbac-config-invalid'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('rbac-config-invalid', message, options);
  }
}

function pathWithoutQuery(path: string): string {
  const mark = path.search(/[?#]/);
  return mark < 0 ? path : path.slice(0, mark);
}

function principalNameMatches(matcher: (value: string) => boolean, input: RbacInput): boolean {
  const cert = input.connection.peerCertificate;
  if (!cert) return false;
  if (cert.uriSans.length > 0) return cert.uriSans.some(matcher);
  if (cert.dnsSans.length > 0) return cert.dnsSans.some(matcher);
  return matcher(cert.subject);
}

function compileList(configs: unknown, compile: (config: RuleConfig) => Predicate, field: string): Predicate[] {
  if (!Array.isArray(configs)) throw new RbacConfigError(`${field} must be a list`);
  return configs.map((config) => compile(config as RuleConfig));
}

function compilePrincipal(config: RuleConfig): Predicate {
  const [key, value] = onlyMember(config, 'principal');
  switch (key) {
    case 'any':
      return () => true;
    case 'and_ids': {
      const all = compileList((value as { ids: unknown }).ids, compilePrincipal, 'and_ids.ids');
      return (input) => all.every((p) => p(input));
    }
    case 'or_ids': {
      const any = compileList((value as { ids: unknown }).ids, compilePrincipal, 'or_ids.ids');
      return (input) => any.some((p) => p(input));
    }
    case 'not_id': {
      const inner = compilePrincipal(value as RuleConfig);
      return (input) => !inner(input);
    }
    case 'authenticated': {
      const name = (value as { principal_name?: StringMatcherConfig }).principal_name;
      if (!name) return (input) => input.connection.peerCertificate !== undefined;
      const matcher = compileStringMatcher(name);
      return (input) => principalNameMatches(matcher, input);
    }
    case 'direct_remote_ip':
    case 'remote_ip':
    case 'source_ip': {
      const inRange = compileCidrRanges([value as CidrRangeConfig]);
      return (input) => inRange(input.connection.sourceAddress);
    }
    case 'header': {
      const matcher = compileHeaderMatcher(value as HeaderMatcherConfig, { individually: true });
      return (input) => input.request !== undefined && matcher(input.request);
    }
    case 'url_path':
      return compileUrlPath(value);
    case 'metadata': {
      const matcher = compileMetadataMatcher(value as MetadataMatcherConfig);
      return (input) => matcher(input.metadata);
    }
    default:
      throw new RbacConfigError(`principal field "${key}" is not supported`);
  }
}

function compileUrlPath(value: unknown): Predicate {
  const path = (value as { path?: StringMatcherConfig }).path;
  if (!path) throw new RbacConfigError('url_path.path is required');
  const matcher = compileStringMatcher(path);
  return (input) => input.request !== undefined && matcher(pathWithoutQuery(input.request.path));
}

function compilePermission(config: RuleConfig): Predicate {
  const [key, value] = onlyMember(config, 'permission');
  switch (key) {
    case 'any':
      return () => true;
    case 'and_rules': {
      const all = compileList((value as { rules: unknown }).rules, compilePermission, 'and_rules.rules');
      return (input) => all.every((p) => p(input));
    }
    case 'or_rules': {
      const any = compileList((value as { rules: unknown }).rules, compilePermission, 'or_rules.rules');
      return (input) => any.some((p) => p(input));
    }
    case 'not_rule': {
      const inner = compilePermission(value as RuleConfig);
      return (input) => !inner(input);
    }
    case 'header': {
      const matcher = compileHeaderMatcher(value as HeaderMatcherConfig, { individually: true });
      return (input) => input.request !== undefined && matcher(input.request);
    }
    case 'url_path':
      return compileUrlPath(value);
    case 'uri_template': {
      const template = (value as { typed_config?: { path_template?: string } }).typed_config?.path_template;
      if (template === undefined) throw new RbacConfigError('uri_template.typed_config.path_template is required');
      const matches = compileUriTemplate(template);
      return (input) => input.request !== undefined && matches(pathWithoutQuery(input.request.path));
    }
    case 'destination_ip': {
      const inRange = compileCidrRanges([value as CidrRangeConfig]);
      return (input) => inRange(input.connection.destinationAddress);
    }
    case 'destination_port': {
      const port = Number(value);
      return (input) => input.connection.destinationPort === port;
    }
    case 'destination_port_range': {
      const { start, end } = value as { start: number; end: number };
      return (input) => input.connection.destinationPort >= start && input.connection.destinationPort < end;
    }
    case 'requested_server_name': {
      const matcher = compileStringMatcher(value as StringMatcherConfig);
      return (input) => matcher(input.connection.serverName ?? '');
    }
    case 'metadata': {
      const matcher = compileMetadataMatcher(value as MetadataMatcherConfig);
      return (input) => matcher(input.metadata);
    }
    default:
      throw new RbacConfigError(`permission field "${key}" is not supported`);
  }
}

function onlyMember(config: RuleConfig, what: string): [string, unknown] {
  const entries = Object.entries(config).filter(([, value]) => value !== undefined && value !== null);
  if (entries.length !== 1) throw new RbacConfigError(`a ${what} must set exactly one field, got ${entries.map(([k]) => k).join(', ') || 'none'}`);
  return entries[0] as [string, unknown];
}

type CompiledRules = (input: RbacInput) => { allowed: boolean; matchedPolicy?: string };

function compileRules(rules: RbacRulesConfig): CompiledRules {
  const action = rules.action ?? 'ALLOW';
  // Envoy evaluates policies in name order; the first match names the verdict.
  const policies = Object.entries(rules.policies ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, policy]) => {
      const permissions = compileList(policy.permissions, compilePermission, `policies["${name}"].permissions`);
      const principals = compileList(policy.principals, compilePrincipal, `policies["${name}"].principals`);
      return { name, matches: (input: RbacInput) => permissions.some((p) => p(input)) && principals.some((p) => p(input)) };
    });
  return (input) => {
    const matched = policies.find((policy) => policy.matches(input))?.name;
    const allowed = action === 'ALLOW' ? matched !== undefined : action === 'DENY' ? matched === undefined : true;
    return matched === undefined ? { allowed } : { allowed, matchedPolicy: matched };
  };
}

/**
 * Compiles one RBAC filter (HTTP or network). Without `rules` everything is allowed; ALLOW
 * allows what a policy matches, DENY denies it, LOG allows everything.
 */
export function compileRbacFilter(config: RbacFilterConfig): (input: RbacInput) => RbacVerdict {
  const enforced = config.rules ? compileRules(config.rules) : undefined;
  const shadow = config.shadow_rules ? compileRules(config.shadow_rules) : undefined;
  const prefix = config.shadow_rules_stat_prefix ?? '';
  return (input) => {
    const verdict = enforced ? enforced(input) : { allowed: true };
    if (!shadow) return verdict;
    const dryRun = shadow(input);
    const dynamicMetadata: Record<string, string> = { [`${prefix}shadow_engine_result`]: dryRun.allowed ? 'allowed' : 'denied' };
    if (dryRun.matchedPolicy !== undefined) dynamicMetadata[`${prefix}shadow_effective_policy_id`] = dryRun.matchedPolicy;
    return { ...verdict, shadow: dryRun, dynamicMetadata };
  };
}
