import type {
  AuthorizationCondition,
  AuthorizationOperation,
  AuthorizationPolicy,
  AuthorizationRule,
  AuthorizationSource,
} from './authorization-policy-schema.js';
import { checkAttribute, ipOrCidrProblem, portProblem, serviceAccountProblem, trustDomainProblem } from './authorization-attributes.js';
import { checkTargetSelection } from './validate-shared.js';
import { renderPath, type IssueSink, type Path } from './validation-issue.js';

type SourceField = keyof AuthorizationSource;
type OperationField = keyof AuthorizationOperation;

const SOURCE_FIELDS: readonly SourceField[] = [
  'principals',
  'notPrincipals',
  'requestPrincipals',
  'notRequestPrincipals',
  'namespaces',
  'notNamespaces',
  'serviceAccounts',
  'notServiceAccounts',
  'ipBlocks',
  'notIpBlocks',
  'remoteIpBlocks',
  'notRemoteIpBlocks',
  'trustDomains',
  'notTrustDomains',
];
const OPERATION_FIELDS: readonly OperationField[] = ['hosts', 'notHosts', 'ports', 'notPorts', 'methods', 'notMethods', 'paths', 'notPaths'];

/** Request principals exist only once a JWT was checked, which happens in HTTP requests only. */
const HTTP_ONLY_SOURCE_FIELDS: ReadonlySet<SourceField> = new Set(['requestPrincipals', 'notRequestPrincipals']);
const HTTP_ONLY_OPERATION_FIELDS: ReadonlySet<OperationField> = new Set(['hosts', 'notHosts', 'methods', 'notMethods', 'paths', 'notPaths']);
const CUSTOM_ALLOWED_SOURCE_FIELDS: ReadonlySet<SourceField> = new Set(['ipBlocks', 'notIpBlocks', 'remoteIpBlocks', 'notRemoteIpBlocks']);

const SOURCE_VALUE_CHECKS: Partial<Record<SourceField, (value: string) => string | undefined>> = {
  ipBlocks: ipOrCidrProblem,
  notIpBlocks: ipOrCidrProblem,
  remoteIpBlocks: ipOrCidrProblem,
  notRemoteIpBlocks: ipOrCidrProblem,
  serviceAccounts: serviceAccountProblem,
  notServiceAccounts: serviceAccountProblem,
  trustDomains: trustDomainProblem,
  notTrustDomains: trustDomainProblem,
};

const PATH_LITERAL = /^[a-zA-Z0-9\-._~%!$&'()+,;:@=]+$/;

function pathTemplateProblem(path: string): string | undefined {
  const hasTemplate = path.includes('{*}') || path.includes('{**}');
  let sawMatchAny = false;
  for (const segment of path.replace(/^\/+|\/+$/g, '').split('/')) {
    if (segment === '{*}' || segment === '{**}') {
      if (sawMatchAny) return `expected {**} to be the last template in the path, got "${path}"`;
      sawMatchAny = segment === '{**}';
      continue;
    }
    if (segment.includes('{') || segment.includes('}')) {
      return `expected '{' and '}' only as the whole-segment templates {*} and {**}, got "${path}"`;
    }
    if (hasTemplate && !PATH_LITERAL.test(segment)) {
      return `expected path segments of letters, digits and -._~%!$&'()+,;:@= around templates, got segment "${segment}" in "${path}"`;
    }
  }
  return undefined;
}

const OPERATION_VALUE_CHECKS: Partial<Record<OperationField, (value: string) => string | undefined>> = {
  ports: portProblem,
  notPorts: portProblem,
  paths: pathTemplateProblem,
  notPaths: pathTemplateProblem,
};

function checkValues(sink: IssueSink, path: Path, values: readonly string[] | undefined, check: ((value: string) => string | undefined) | undefined): void {
  if (check === undefined) return;
  (values ?? []).forEach((value, i) => {
    const problem = check(value);
    if (problem !== undefined) sink.error([...path, i], problem);
  });
}

function isSet(values: readonly string[] | undefined): boolean {
  return values !== undefined && values.length > 0;
}

/** What a rule tests, sorted by whether TCP traffic can answer it; paths are relative to the rule. */
type RuleFacts = { httpOnly: string[]; tcp: string[]; portScoped: boolean };

function checkSource(sink: IssueSink, path: Path, source: AuthorizationSource, custom: boolean, facts: RuleFacts, rel: string): void {
  const used = SOURCE_FIELDS.filter((field) => isSet(source[field]));
  if (used.length === 0) {
    sink.error(path, 'expected at least one field in source, such as principals, namespaces or ipBlocks');
  }
  const byServiceAccount = isSet(source.serviceAccounts) || isSet(source.notServiceAccounts);
  const byPrincipalOrNamespace = (['principals', 'notPrincipals', 'namespaces', 'notNamespaces'] as const).some((field) => isSet(source[field]));
  if (byServiceAccount && byPrincipalOrNamespace) {
    sink.error(path, 'expected either serviceAccounts/notServiceAccounts or principals/notPrincipals/namespaces/notNamespaces in one source, not both');
  }
  for (const field of used) {
    checkValues(sink, [...path, field], source[field], SOURCE_VALUE_CHECKS[field]);
    if (custom && !CUSTOM_ALLOWED_SOURCE_FIELDS.has(field)) {
      sink.error([...path, field], 'not supported with action CUSTOM: expected only ipBlocks, notIpBlocks, remoteIpBlocks or notRemoteIpBlocks');
    }
    (HTTP_ONLY_SOURCE_FIELDS.has(field) ? facts.httpOnly : facts.tcp).push(`${rel}.${field}`);
  }
}

function checkOperation(sink: IssueSink, path: Path, operation: AuthorizationOperation, facts: RuleFacts, rel: string): void {
  const used = OPERATION_FIELDS.filter((field) => isSet(operation[field]));
  if (used.length === 0) {
    sink.error(path, 'expected at least one field in operation, such as paths, methods or ports');
  }
  for (const field of used) {
    checkValues(sink, [...path, field], operation[field], OPERATION_VALUE_CHECKS[field]);
    (HTTP_ONLY_OPERATION_FIELDS.has(field) ? facts.httpOnly : facts.tcp).push(`${rel}.${field}`);
    if (field === 'ports' || field === 'notPorts') facts.portScoped = true;
  }
}

function checkCondition(sink: IssueSink, path: Path, condition: AuthorizationCondition, custom: boolean, facts: RuleFacts, rel: string): void {
  const { key } = condition;
  if (!isSet(condition.values) && !isSet(condition.notValues)) {
    sink.error(path, `expected values or notValues for key "${key}"`);
  }
  const attribute = checkAttribute(key);
  if (!attribute.ok) {
    sink.error([...path, 'key'], attribute.problem);
    return;
  }
  if (custom && attribute.notForCustom) {
    sink.error(
      [...path, 'key'],
      `attribute "${key}" is not supported with action CUSTOM: expected attributes such as source.ip, remote.ip, destination.port or request.headers[<name>]`,
    );
  }
  checkValues(sink, [...path, 'values'], condition.values, attribute.values);
  checkValues(sink, [...path, 'notValues'], condition.notValues, attribute.values);
  (attribute.httpOnly ? facts.httpOnly : facts.tcp).push(`${rel} (${key})`);
  if (key === 'destination.port') facts.portScoped = true;
}

function checkRule(sink: IssueSink, path: Path, rule: AuthorizationRule, custom: boolean): RuleFacts {
  const facts: RuleFacts = { httpOnly: [], tcp: [], portScoped: false };
  if (rule.from !== undefined && rule.from.length === 0) sink.error([...path, 'from'], 'expected at least one entry when from is set');
  if (rule.to !== undefined && rule.to.length === 0) sink.error([...path, 'to'], 'expected at least one entry when to is set');
  (rule.from ?? []).forEach((from, j) => {
    const at = [...path, 'from', j, 'source'];
    if (from.source === undefined) {
      sink.error(at, 'required: expected a source with at least one field');
      return;
    }
    checkSource(sink, at, from.source, custom, facts, renderPath(['from', j, 'source']));
  });
  (rule.to ?? []).forEach((to, j) => {
    const at = [...path, 'to', j, 'operation'];
    if (to.operation === undefined) {
      sink.error(at, 'required: expected an operation with at least one field');
      return;
    }
    checkOperation(sink, at, to.operation, facts, renderPath(['to', j, 'operation']));
  });
  (rule.when ?? []).forEach((condition, k) => {
    checkCondition(sink, [...path, 'when', k], condition, custom, facts, renderPath(['when', k]));
  });
  return facts;
}

/**
 * On TCP ports HTTP-only conditions cannot be evaluated: a DENY rule drops them and so denies more,
 * an ALLOW rule is dropped whole and so allows nothing. Both are legal and both surprise.
 */
function warnAboutTcpPorts(sink: IssueSink, path: Path, action: string, facts: RuleFacts): void {
  if (facts.httpOnly.length === 0) return;
  const fields = facts.httpOnly.join(', ');
  if (action === 'DENY' && !facts.portScoped) {
    const effect =
      facts.tcp.length === 0
        ? 'TCP traffic has no such attributes, so on TCP ports the rule denies all traffic'
        : 'on TCP ports those fields are ignored and the rule denies all traffic matching its other conditions';
    sink.warn(path, `DENY rule uses HTTP-only fields (${fields}); ${effect}; set to.operation.ports to limit it to HTTP ports`);
  } else if (action === 'ALLOW' && facts.tcp.length === 0) {
    sink.warn(path, `ALLOW rule uses only HTTP fields (${fields}); on TCP ports the rule is ignored, so it allows no TCP traffic`);
  }
}

export function validateAuthorizationPolicy(sink: IssueSink, resource: AuthorizationPolicy): void {
  const { spec } = resource;
  const action = spec.action ?? 'ALLOW';
  const custom = action === 'CUSTOM';
  checkTargetSelection(sink, ['spec'], spec);

  if (custom) {
    if (spec.provider === undefined) {
      sink.error(['spec', 'provider'], 'action CUSTOM requires a provider: expected provider.name, the extension provider to call');
    } else if (spec.provider.name === undefined || spec.provider.name === '') {
      sink.error(['spec', 'provider', 'name'], 'action CUSTOM requires a provider: expected a non-empty provider name');
    }
  } else if (spec.provider !== undefined) {
    sink.error(['spec', 'provider'], `expected no provider with action ${action}: only action CUSTOM calls a provider`);
  }
  if ((action === 'DENY' || custom) && (spec.rules === undefined || spec.rules.length === 0)) {
    sink.error(['spec', 'rules'], `action ${action} without rules never matches: expected at least one rule (an empty rule {} matches every request)`);
  }

  (spec.rules ?? []).forEach((rule, i) => {
    const path = ['spec', 'rules', i];
    const facts = checkRule(sink, path, rule, custom);
    warnAboutTcpPorts(sink, path, action, facts);
  });
}
