import { ROOT_SECRET, WORKLOAD_SECRET } from './sds-secret-config.js';

/** SDS names of Secret credentials, served by the daemon over ADS: `kubernetes://[<ns>/]<name>`. */
export const KUBERNETES_SECRET_PREFIX = 'kubernetes://';
/** The suffix of the resource holding the CA of a credential (`kubernetes://<name>-cacert`). */
export const CREDENTIAL_CA_SUFFIX = '-cacert';
const SDS_PREFIX = 'sds://';

/**
 * The SDS resource name of a `credentialName`: the builtin names (`default`, `ROOTCA`) and
 * `sds://` names stay with the agent's SDS; `kubernetes://` names stay as written; any other name
 * (`<name>` or `<ns>/<name>`) becomes `kubernetes://<name>`.
 */
export function credentialResourceName(credentialName: string): string {
  if (isAgentSecret(credentialName) || credentialName.startsWith(KUBERNETES_SECRET_PREFIX)) return credentialName;
  return `${KUBERNETES_SECRET_PREFIX}${credentialName}`;
}

/** True for names the agent's SDS serves (`default`, `ROOTCA`, `sds://…`), not the daemon. */
export function isAgentSecret(name: string): boolean {
  return name === WORKLOAD_SECRET || name === ROOT_SECRET || name.startsWith(SDS_PREFIX);
}

/** A requested `kubernetes://` resource, resolved: whose Secret it reads and whether only its CA. */
export interface CredentialResource {
  readonly resourceName: string;
  readonly namespace: string;
  readonly name: string;
  /** `…-cacert`: the CA of the credential, from the `<name>-cacert` Secret, else the `<name>` Secret's CA. */
  readonly caOnly: boolean;
}

/**
 * Parses `kubernetes://<name>` (a Secret of `proxyNamespace`) or `kubernetes://<ns>/<name>`;
 * undefined for any other form (no prefix, empty parts, more than one `/`).
 */
export function parseCredentialResource(resourceName: string, proxyNamespace: string): CredentialResource | undefined {
  if (!resourceName.startsWith(KUBERNETES_SECRET_PREFIX)) return undefined;
  const parts = resourceName.slice(KUBERNETES_SECRET_PREFIX.length).split('/');
  if (parts.length > 2 || parts.some((part) => part === '')) return undefined;
  const [first = '', second] = parts;
  const namespace = second === undefined ? proxyNamespace : first;
  const name = second ?? first;
  return { resourceName, namespace, name, caOnly: name.endsWith(CREDENTIAL_CA_SUFFIX) };
}
