import type { Analyzer } from '../analyzer.js';
import { resolveExtAuthzProvider } from '../../crds/index.js';
import { identitiesNamed } from './policy-references.js';

/**
 * MSH0101: an AuthorizationPolicy whose `from.source.namespaces` or `notNamespaces` names a
 * namespace that does not exist, as the reference checks it: once per mention, a `*` prefix or
 * suffix matching any existing namespace it covers, `*` alone always, names compared without case.
 * Namespaces inside principals and conditions are not checked here (MSH1006 names principals no
 * pod runs as).
 */
export const authorizationPoliciesAnalyzer: Analyzer = {
  name: 'auth.AuthorizationPoliciesAnalyzer',
  description: 'Checks the namespaces named by authorization policies exist',
  inputs: ['AuthorizationPolicy', 'Namespace'],
  analyze(context) {
    const namespaces = context.read('Namespace').map((namespace) => namespace.name);
    for (const resource of context.read('AuthorizationPolicy')) {
      for (const rule of resource.object.spec.rules ?? []) {
        for (const from of rule.from ?? []) {
          for (const named of [...(from.source?.namespaces ?? []), ...(from.source?.notNamespaces ?? [])]) {
            if (!namespaces.some((namespace) => namespaceMatches(namespace, named)))
              context.report('ReferencedResourceNotFound', resource, `Referenced namespace not found: "${named}"`);
          }
        }
      }
    }
  },
};

function namespaceMatches(namespace: string, pattern: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*')) return namespace.endsWith(pattern.slice(1));
  if (pattern.endsWith('*')) return namespace.startsWith(pattern.slice(0, -1));
  return namespace.toLowerCase() === pattern.toLowerCase();
}

/**
 * MSH1006: a principal or service account whose service account no pod of its namespace runs as
 * (pods without `serviceAccountName` run as `default`). Such a rule matches no workload today.
 */
export const serviceAccountAnalyzer: Analyzer = {
  name: 'auth.ServiceAccountAnalyzer',
  description: 'Checks the service accounts named by authorization policies are used by some pod',
  inputs: ['AuthorizationPolicy', 'Pod'],
  analyze(context) {
    const used = new Set(context.read('Pod').map((pod) => `${pod.namespace}/${pod.object.spec?.serviceAccountName ?? 'default'}`));
    for (const resource of context.read('AuthorizationPolicy')) {
      for (const reference of identitiesNamed(resource.object.spec, resource.namespace)) {
        if (reference.serviceAccount === undefined || used.has(`${reference.namespace}/${reference.serviceAccount}`)) continue;
        const message = `Referenced service account "${reference.namespace}/${reference.serviceAccount}" (in "${reference.value}") is used by no pod: the rule matches no workload`;
        context.report('PrincipalServiceAccountNotUsed', resource, message);
      }
    }
  },
};

/**
 * MSH0101: a CUSTOM AuthorizationPolicy whose provider is not among the mesh config's
 * extensionProviders, or cannot be used (not an authorizer, its service missing from the
 * registry or found in several namespaces): the daemon denies the requests its rules match.
 */
export const extensionProviderAnalyzer: Analyzer = {
  name: 'auth.ExtensionProviderAnalyzer',
  description: 'Checks the extension provider of each CUSTOM authorization policy is defined in the mesh config and usable',
  inputs: ['AuthorizationPolicy', 'MeshConfig', 'Service'],
  analyze(context) {
    const providers = context.read('MeshConfig').extensionProviders ?? [];
    const services = context
      .read('Service')
      .map((service) => ({ hostname: `${service.name}.${service.namespace}.svc.${context.domainSuffix}`, namespace: service.namespace }));
    const servicesByHost = (hostname: string): typeof services => services.filter((service) => service.hostname === hostname);
    for (const resource of context.read('AuthorizationPolicy')) {
      const { action, provider } = resource.object.spec;
      if (action !== 'CUSTOM' || provider?.name === undefined) continue;
      if (!providers.some((candidate) => candidate.name === provider.name)) {
        context.report('ReferencedResourceNotFound', resource, `Referenced extension provider not found: "${provider.name}"`);
        continue;
      }
      const resolution = resolveExtAuthzProvider(provider.name, providers, servicesByHost);
      if (!resolution.ok) {
        context.report(
          'ReferencedResourceNotFound',
          resource,
          `Referenced extension provider "${provider.name}" cannot be used (${resolution.problem}): the requests its rules match are denied`,
        );
      }
    }
  },
};
