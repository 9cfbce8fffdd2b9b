import type { EnvoyExtAuthzGrpcProvider, EnvoyExtAuthzHttpProvider, ExtensionProvider } from './extension-provider-schema.js';

/** A service as provider lookup needs it: its host name and namespace. */
export interface ProviderServiceRef {
  readonly hostname: string;
  readonly namespace: string;
}

export type ResolvedExtAuthzProvider =
  | { readonly name: string; readonly kind: 'http'; readonly hostname: string; readonly cluster: string; readonly settings: EnvoyExtAuthzHttpProvider }
  | { readonly name: string; readonly kind: 'grpc'; readonly hostname: string; readonly cluster: string; readonly settings: EnvoyExtAuthzGrpcProvider };

export type ExtAuthzProviderResolution = { readonly ok: true; readonly provider: ResolvedExtAuthzProvider } | { readonly ok: false; readonly problem: string };

const PROVIDER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Provider names go into policy names and metadata keys: DNS-1123 labels, as the reference requires. */
function providerNameProblem(name: string): string | undefined {
  if (name.length > 63) return `provider name "${name}" is longer than 63 characters`;
  return PROVIDER_NAME.test(name)
    ? undefined
    : `provider name "${name}" must consist of lowercase letters, digits and "-", and start and end with a letter or digit`;
}

/** `outbound|<port>||<host>`: the cluster every sidecar has for a service port. */
function outboundCluster(hostname: string, port: number): string {
  return `outbound|${port}||${hostname}`;
}

/**
 * The service of a provider as the reference looks it up: `<namespace>/<host>` exactly, or a bare
 * host that only one namespace has.
 */
function lookupService(service: string, servicesByHost: (hostname: string) => readonly ProviderServiceRef[]): { hostname: string } | { problem: string } {
  const slash = service.indexOf('/');
  if (slash >= 0) {
    const namespace = service.slice(0, slash);
    const host = service.slice(slash + 1);
    const found = servicesByHost(host).find((candidate) => candidate.namespace === namespace);
    return found ? { hostname: found.hostname } : { problem: `could not find service ${service} in the mesh's service registry` };
  }
  const namespaces = [...new Set(servicesByHost(service).map((candidate) => candidate.namespace))].sort();
  if (namespaces.length === 1) return { hostname: service };
  if (namespaces.length > 1) {
    return {
      problem: `found ${service} in multiple namespaces [${namespaces.join(' ')}], specify the namespace explicitly in the format of <Namespace>/<Hostname>`,
    };
  }
  return { problem: `could not find service ${service} in the mesh's service registry` };
}

/**
 * The external authorizer a CUSTOM policy names, resolved against the mesh config's providers
 * and the service registry; a problem says why it cannot be used (the policy's rules are then
 * denied, as the reference does).
 */
export function resolveExtAuthzProvider(
  name: string,
  providers: readonly ExtensionProvider[],
  servicesByHost: (hostname: string) => readonly ProviderServiceRef[],
): ExtAuthzProviderResolution {
  const matching = providers.filter((provider) => provider.name === name);
  if (matching.length === 0) {
    return { ok: false, problem: `available providers are [${providers.map((provider) => provider.name).join(' ')}] but found "${name}"` };
  }
  if (matching.length > 1) return { ok: false, problem: `extension provider name must be unique, found duplicate: ${name}` };
  const provider = matching[0] as ExtensionProvider;
  const nameProblem = providerNameProblem(name);
  if (nameProblem) return { ok: false, problem: `invalid provider name: ${nameProblem}` };
  const settings = provider.envoyExtAuthzHttp ?? provider.envoyExtAuthzGrpc;
  if (!settings) return { ok: false, problem: `extension provider "${name}" is not an external authorizer (envoyExtAuthzHttp or envoyExtAuthzGrpc)` };
  const found = lookupService(settings.service, servicesByHost);
  if ('problem' in found) return { ok: false, problem: `found errors in provider ${name}: ${found.problem}` };
  const cluster = outboundCluster(found.hostname, settings.port);
  return provider.envoyExtAuthzHttp
    ? { ok: true, provider: { name, kind: 'http', hostname: found.hostname, cluster, settings: provider.envoyExtAuthzHttp } }
    : { ok: true, provider: { name, kind: 'grpc', hostname: found.hostname, cluster, settings: provider.envoyExtAuthzGrpc as EnvoyExtAuthzGrpcProvider } };
}
