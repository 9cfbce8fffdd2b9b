import type { Credential } from '../../../controllers/index.js';
import { formatObjectKey } from '../../../names/index.js';
import { SECRET_TYPE } from '../../envoy/type-urls.js';
import type { GenerateRequest, Generator, NamedResource } from '../../generator.js';
import type { Proxy } from '../../proxy.js';
import { parseCredentialResource, type CredentialResource } from '../../security/credential-names.js';
import type { PushContext } from '../../model/push-context.js';

/** Why a requested secret was not sent: a bounded set, for logs. */
export type SecretRefusal = 'not-a-gateway' | 'foreign-namespace' | 'unknown-name';

export interface SecretRefusalEvent {
  readonly proxy: Proxy;
  /** The namespace the proxy may read: its verified identity's, else its own. */
  readonly namespace: string;
  readonly refused: readonly { readonly resourceName: string; readonly reason: SecretRefusal }[];
}

export interface GatewaySecretGeneratorOptions {
  /** Told of every generation that refused names (logged and counted by the caller). */
  onRefused?: (event: SecretRefusalEvent) => void;
}

/** The namespace whose secrets a proxy may have: its authenticated identity's, else the one it claims. */
export function secretNamespaceOf(proxy: Proxy): string {
  return proxy.verifiedNamespace ?? proxy.configNamespace;
}

/** The Secrets a resource reads, as config keys: what a Secret push must name for it to matter. */
function secretsRead(resource: CredentialResource): string[] {
  const own = formatObjectKey(resource);
  return resource.caOnly ? [own, formatObjectKey({ namespace: resource.namespace, name: resource.name.slice(0, -'-cacert'.length) })] : [own];
}

function caOf(resource: CredentialResource, credentials: ReadonlyMap<string, Credential>): string | undefined {
  const own = credentials.get(formatObjectKey(resource))?.caCertificate;
  if (own !== undefined) return own;
  // As the reference: without a `<name>-cacert` Secret, the CA of the `<name>` Secret itself.
  return credentials.get(formatObjectKey({ namespace: resource.namespace, name: resource.name.slice(0, -'-cacert'.length) }))?.caCertificate;
}

function secretMessage(resource: CredentialResource, credentials: ReadonlyMap<string, Credential>): object | undefined {
  if (resource.caOnly) {
    const ca = caOf(resource, credentials);
    return ca === undefined ? undefined : { name: resource.resourceName, validation_context: { trusted_ca: { inline_bytes: Buffer.from(ca) } } };
  }
  const credential = credentials.get(formatObjectKey(resource));
  if (credential?.certificateChain === undefined || credential.privateKey === undefined) return undefined;
  return {
    name: resource.resourceName,
    tls_certificate: {
      certificate_chain: { inline_bytes: Buffer.from(credential.certificateChain) },
      private_key: { inline_bytes: Buffer.from(credential.privateKey) },
    },
  };
}

/** True when the request must be answered: a new request or forced push, or a change to a Secret one of the names reads. */
function affected(request: GenerateRequest, resources: readonly CredentialResource[]): boolean {
  if (request.configsUpdated.length === 0) return true;
  const changed = new Set(request.configsUpdated.filter((key) => key.kind === 'Secret').map(formatObjectKey));
  if (changed.size === 0) return false;
  return resources.some((resource) => secretsRead(resource).some((key) => changed.has(key)));
}

/**
 * SDS over ADS for gateways' `credentialName`s (`kubernetes://[<ns>/]<name>[-cacert]`): only
 * gateway (router) proxies, and only Secrets of the proxy's own namespace, ever get one. A
 * foreign namespace's secret, or any secret asked by a sidecar, is refused (not sent) and
 * reported. Secrets never go through the shared cache: they are per namespace and key material.
 */
export function newGatewaySecretGenerator(options: GatewaySecretGeneratorOptions = {}): Generator<PushContext> {
  return {
    typeUrl: SECRET_TYPE,
    generate(proxy, push, request) {
      const names = request.delta?.subscribed ?? request.names;
      const namespace = secretNamespaceOf(proxy);
      const refused: { resourceName: string; reason: SecretRefusal }[] = [];
      const allowed: CredentialResource[] = [];
      for (const name of names) {
        const resource = parseCredentialResource(name, namespace);
        if (proxy.type !== 'router') refused.push({ resourceName: name, reason: 'not-a-gateway' });
        else if (!resource) refused.push({ resourceName: name, reason: 'unknown-name' });
        else if (resource.namespace !== namespace || namespace === '') refused.push({ resourceName: name, reason: 'foreign-namespace' });
        else allowed.push(resource);
      }
      if (!affected(request, allowed)) return undefined;
      if (refused.length > 0) options.onRefused?.({ proxy, namespace, refused });
      const resources: NamedResource[] = [];
      for (const resource of allowed) {
        const message = secretMessage(resource, push.credentials);
        if (message) resources.push({ name: resource.resourceName, resource: message });
      }
      return { resources };
    },
  };
}
