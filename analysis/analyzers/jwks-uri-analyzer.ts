import type { Analyzer } from '../analyzer.js';

/**
 * MSH0101: a RequestAuthentication whose `jwksUri` names a Service of the cluster
 * (`<name>.<namespace>.svc[.<domain suffix>]`) that does not exist: the daemon cannot fetch the
 * key set, and every token is refused. External providers (any other host) are not checked.
 */
export const jwksUriAnalyzer: Analyzer = {
  name: 'requestauthentication.JwksUriAnalyzer',
  description: 'Checks that a JWKS provider in the cluster (jwksUri on a Service host) exists',
  inputs: ['RequestAuthentication', 'Service'],
  analyze(context) {
    const services = new Set(context.read('Service').map((service) => `${service.name}.${service.namespace}`));
    const inCluster = new RegExp(`^([^.]+)\\.([^.]+)\\.svc(?:\\.${context.domainSuffix.replace(/\./g, '\\.')})?$`);
    for (const resource of context.read('RequestAuthentication')) {
      for (const rule of resource.object.spec.jwtRules ?? []) {
        if (rule.jwksUri === undefined) continue;
        let host: string;
        try {
          host = new URL(rule.jwksUri).hostname;
        } catch {
          continue;
        }
        const match = inCluster.exec(host);
        if (match && !services.has(`${match[1]}.${match[2]}`))
          context.report('ReferencedResourceNotFound', resource, `Referenced JWKS provider not found: "${host}"`);
      }
    }
  },
};
