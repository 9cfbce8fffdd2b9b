import { isDns1123Label, isDns1123Subdomain } from './dns-names.js';
import { KIND_NAMES, servedApiVersionsOf, type KindName } from './kinds.js';
import type { ObjectMeta } from './object-meta-schema.js';
import { RESOURCE_SCHEMAS, type TypedResource } from './resource-schemas.js';
import { validateAuthorizationPolicy } from './validate-authorization-policy.js';
import { validateDestinationRule } from './validate-destination-rule.js';
import { validateGateway } from './validate-gateway.js';
import type { ValidateOptions } from './validate-options.js';
import { checkBoundPorts, validatePeerAuthentication } from './validate-peer-authentication.js';
import { validateRequestAuthentication } from './validate-request-authentication.js';
import { validateServiceEntry } from './validate-service-entry.js';
import { validateVirtualService } from './validate-virtual-service.js';
import { validateWorkloadEntry, validateWorkloadGroup } from './validate-workload-entry.js';
import { IssueSink, type ValidationIssue } from './validation-issue.js';
import { describeInput, toValidationIssues, zodErrorMap } from './zod-issues.js';

/**
 * The outcome of validating one object. `resource` is the typed object, present exactly when there
 * are no errors; warnings flag legal but suspicious specs and never block.
 */
export type ValidationResult = {
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
  resource?: TypedResource;
};

/**
 * The part of validation that needs nothing but the object (schema and semantic checks), as plain
 * data that can cross a thread. `typed` is the schema's output, present whenever the schema
 * accepted the object (semantic errors may still follow); {@link completeValidation} adds the
 * checks that need the cluster.
 */
export type ResourceCheck = {
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
  typed?: TypedResource;
};

const API_VERSIONS = [...new Set(KIND_NAMES.flatMap(servedApiVersionsOf))];

function isKindName(value: unknown): value is KindName {
  return typeof value === 'string' && (KIND_NAMES as readonly string[]).includes(value);
}

/** `a`, `a or b`, `a, b or c`. */
function alternatives(items: readonly string[]): string {
  return items.length <= 2 ? items.join(' or ') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1] ?? ''}`;
}

function quoted(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : describeInput(value);
}

/** Resolves apiVersion and kind to one of our kinds, or says why not. */
function resolveKind(apiVersion: unknown, kind: unknown): { kind: KindName } | { errors: ValidationIssue[] } {
  if (isKindName(kind)) {
    const served = servedApiVersionsOf(kind);
    if (typeof apiVersion === 'string' && served.includes(apiVersion)) return { kind };
    return { errors: [{ path: 'apiVersion', message: `expected ${alternatives(served)} for kind ${kind}, got ${quoted(apiVersion)}` }] };
  }
  const errors: ValidationIssue[] = [];
  const kindsOfVersion = KIND_NAMES.filter((name) => typeof apiVersion === 'string' && servedApiVersionsOf(name).includes(apiVersion)).sort();
  if (kindsOfVersion.length === 0) {
    errors.push({ path: 'apiVersion', message: `unknown apiVersion ${quoted(apiVersion)}: expected one of ${API_VERSIONS.join(', ')}` });
  }
  const expectedKinds = kindsOfVersion.length > 0 ? kindsOfVersion : [...KIND_NAMES].sort();
  const where = kindsOfVersion.length > 0 ? ` for apiVersion ${String(apiVersion)}` : '';
  errors.push({ path: 'kind', message: `unknown kind ${quoted(kind)}${where}: expected one of ${expectedKinds.join(', ')}` });
  return { errors };
}

function checkMetadata(sink: IssueSink, kind: KindName, metadata: ObjectMeta): void {
  const { name, namespace } = metadata;
  if (kind === 'Gateway') {
    // Gateways are referenced as namespace/name from VirtualServices, so the name is a single label.
    if (!isDns1123Label(name)) {
      sink.error(
        ['metadata', 'name'],
        `expected a DNS-1123 label for a Gateway name (lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters), got "${name}"`,
      );
    }
  } else if (!isDns1123Subdomain(name)) {
    sink.error(
      ['metadata', 'name'],
      `expected a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', each part starting and ending with a letter or digit, at most 253 characters), got "${name}"`,
    );
  }
  if (namespace !== undefined && !isDns1123Label(namespace)) {
    sink.error(['metadata', 'namespace'], `expected a namespace name (a DNS-1123 label), got "${namespace}"`);
  }
}

function validateSpec(sink: IssueSink, resource: TypedResource): void {
  switch (resource.kind) {
    case 'PeerAuthentication':
      return validatePeerAuthentication(sink, resource);
    case 'RequestAuthentication':
      return validateRequestAuthentication(sink, resource);
    case 'AuthorizationPolicy':
      return validateAuthorizationPolicy(sink, resource);
    case 'DestinationRule':
      return validateDestinationRule(sink, resource);
    case 'Gateway':
      return validateGateway(sink, resource);
    case 'VirtualService':
      return validateVirtualService(sink, resource);
    case 'ServiceEntry':
      return validateServiceEntry(sink, resource);
    case 'WorkloadEntry':
      return validateWorkloadEntry(sink, resource);
    case 'WorkloadGroup':
      return validateWorkloadGroup(sink, resource);
  }
}

/**
 * Validates one policy object as a user would apply it (parsed YAML or JSON). Schema errors (types,
 * enums, unknown fields, ranges) come first; when there are none, the semantic checks of the kind
 * run, as the reference control plane's validation does.
 */
export function validateResource(obj: unknown, options: ValidateOptions = {}): ValidationResult {
  return completeValidation(checkResource(obj), options);
}

/** {@link validateResource} without the checks that need the cluster (`options`). */
export function checkResource(obj: unknown): ResourceCheck {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    return {
      errors: [{ path: '', message: `expected an object with apiVersion, kind, metadata and spec, got ${describeInput(obj)}` }],
      warnings: [],
    };
  }
  const { apiVersion, kind } = obj as { apiVersion?: unknown; kind?: unknown };
  const resolved = resolveKind(apiVersion, kind);
  if ('errors' in resolved) return { errors: resolved.errors, warnings: [] };

  const parsed = RESOURCE_SCHEMAS[resolved.kind].safeParse(obj, { error: zodErrorMap, reportInput: true });
  if (!parsed.success) return { errors: toValidationIssues(parsed.error.issues), warnings: [] };

  const typed: TypedResource = parsed.data;
  const sink = new IssueSink();
  checkMetadata(sink, resolved.kind, typed.metadata);
  validateSpec(sink, typed);
  return { errors: sink.errors, warnings: sink.warnings, typed };
}

/** A {@link checkResource} result completed with the checks that need the cluster: what {@link validateResource} gives. */
export function completeValidation(check: ResourceCheck, options: ValidateOptions = {}): ValidationResult {
  const { typed } = check;
  let warnings = check.warnings;
  if (typed?.kind === 'PeerAuthentication' && options.servicePortsForWorkload !== undefined) {
    const sink = new IssueSink();
    checkBoundPorts(sink, typed, options);
    if (sink.warnings.length > 0) warnings = [...warnings, ...sink.warnings];
  }
  const { errors } = check;
  return typed !== undefined && errors.length === 0 ? { errors, warnings, resource: typed } : { errors, warnings };
}
