import {
  renderPath,
  type Destination,
  type DestinationRule,
  type Gateway,
  type TypedResource,
  type ValidationIssue,
  type VirtualService,
} from '../../crds/index.js';

type Path = (string | number)[];

const MESH_GATEWAY = 'mesh';
/** Where a resource without a namespace lands: the same placeholder on both sides keeps them comparable. */
const UNSET_NAMESPACE = 'default';
const DOMAIN_SUFFIX = 'svc.cluster.local';

/**
 * Cross-resource checks over a set of files (`meshctl validate -x`): every gateway a VirtualService
 * names is a Gateway among the resources (or `mesh`), and every subset a destination names is
 * defined by the DestinationRules for its host, when the resources hold any for that host.
 * Findings are warnings, keyed by the VirtualService they concern.
 */
export function checkReferences(resources: readonly TypedResource[]): Map<TypedResource, ValidationIssue[]> {
  const gateways = new Set(resources.filter(isGateway).map((gateway) => `${namespaceOf(gateway)}/${gateway.metadata.name}`));
  const rules = resources.filter(isDestinationRule);
  const findings = new Map<TypedResource, ValidationIssue[]>();
  for (const service of resources.filter(isVirtualService)) {
    const issues: ValidationIssue[] = [];
    for (const [path, reference] of gatewayReferences(service)) {
      if (reference === MESH_GATEWAY) continue;
      const key = gatewayKey(reference, namespaceOf(service));
      if (!gateways.has(key)) {
        issues.push({
          path: renderPath(path),
          message: `gateway "${reference}" (${key}) is not defined in the given files: expected a Gateway there, or "mesh"`,
        });
      }
    }
    for (const [path, destination] of destinations(service)) {
      if (destination.subset === undefined) continue;
      const host = qualify(destination.host, namespaceOf(service));
      const matching = rulesForHost(rules, host);
      if (matching.length === 0) continue;
      if (!matching.some((rule) => rule.spec.subsets?.some((subset) => subset.name === destination.subset))) {
        const names = matching.map((rule) => `${namespaceOf(rule)}/${rule.metadata.name}`).join(', ');
        issues.push({
          path: renderPath([...path, 'subset']),
          message: `subset "${destination.subset}" is not defined in DestinationRule ${names} for host ${host}`,
        });
      }
    }
    if (issues.length > 0) findings.set(service, issues);
  }
  return findings;
}

function isGateway(resource: TypedResource): resource is Gateway {
  return resource.kind === 'Gateway';
}

function isDestinationRule(resource: TypedResource): resource is DestinationRule {
  return resource.kind === 'DestinationRule';
}

function isVirtualService(resource: TypedResource): resource is VirtualService {
  return resource.kind === 'VirtualService';
}

function namespaceOf(resource: TypedResource): string {
  return resource.metadata.namespace ?? UNSET_NAMESPACE;
}

/** `namespace/name`, `name` (the VirtualService's namespace) or the legacy `name.namespace[.svc…]`. */
function gatewayKey(reference: string, namespace: string): string {
  const slash = reference.indexOf('/');
  if (slash >= 0) return `${reference.slice(0, slash)}/${reference.slice(slash + 1)}`;
  const [name = '', legacyNamespace] = reference.split('.');
  return `${legacyNamespace ?? namespace}/${name}`;
}

function* gatewayReferences(service: VirtualService): Generator<[Path, string]> {
  const { spec } = service;
  for (const [i, gateway] of (spec.gateways ?? []).entries()) yield [['spec', 'gateways', i], gateway];
  const routeLists = [
    ['http', spec.http ?? []],
    ['tls', spec.tls ?? []],
    ['tcp', spec.tcp ?? []],
  ] as const;
  for (const [field, routes] of routeLists) {
    for (const [i, route] of routes.entries()) {
      for (const [j, match] of (route.match ?? []).entries()) {
        for (const [k, gateway] of (match.gateways ?? []).entries()) yield [['spec', field, i, 'match', j, 'gateways', k], gateway];
      }
    }
  }
}

function* destinations(service: VirtualService): Generator<[Path, Destination]> {
  const { spec } = service;
  for (const [i, route] of (spec.http ?? []).entries()) {
    for (const [j, target] of (route.route ?? []).entries()) yield [['spec', 'http', i, 'route', j, 'destination'], target.destination];
    if (route.mirror) yield [['spec', 'http', i, 'mirror'], route.mirror];
    for (const [j, mirror] of (route.mirrors ?? []).entries()) yield [['spec', 'http', i, 'mirrors', j, 'destination'], mirror.destination];
  }
  for (const field of ['tls', 'tcp'] as const) {
    for (const [i, route] of (spec[field] ?? []).entries()) {
      for (const [j, target] of (route.route ?? []).entries()) yield [['spec', field, i, 'route', j, 'destination'], target.destination];
    }
  }
}

/** A short service name is a service of the resource's namespace, as the control plane resolves it. */
function qualify(host: string, namespace: string): string {
  const trimmed = host.endsWith('.') ? host.slice(0, -1) : host;
  return trimmed.includes('.') || trimmed.startsWith('*') ? trimmed : `${trimmed}.${namespace}.${DOMAIN_SUFFIX}`;
}

/** The rules for a host: those naming it exactly, else those whose wildcard covers it most closely. */
function rulesForHost(rules: readonly DestinationRule[], host: string): DestinationRule[] {
  const exact = rules.filter((rule) => qualify(rule.spec.host, namespaceOf(rule)) === host);
  if (exact.length > 0) return exact;
  let best: DestinationRule[] = [];
  let bestLength = -1;
  for (const rule of rules) {
    const pattern = qualify(rule.spec.host, namespaceOf(rule));
    if (!pattern.startsWith('*')) continue;
    const suffix = pattern.slice(1);
    if (!host.endsWith(suffix) || suffix.length < bestLength) continue;
    if (suffix.length > bestLength) best = [];
    best.push(rule);
    bestLength = suffix.length;
  }
  return best;
}
