import { CaError } from '../ca-error.js';

/** A workload identity: `spiffe://<trust domain>/ns/<namespace>/sa/<service account>`. */
export interface WorkloadIdentity {
  readonly trustDomain: string;
  readonly namespace: string;
  readonly serviceAccount: string;
}

const LABEL = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const TRUST_DOMAIN = /^[a-z0-9._-]+$/;

export function spiffeId(identity: WorkloadIdentity): string {
  if (!TRUST_DOMAIN.test(identity.trustDomain)) throw new CaError('identity-invalid', 'invalid trust domain');
  if (!LABEL.test(identity.namespace) || !LABEL.test(identity.serviceAccount)) {
    throw new CaError('identity-invalid', 'invalid namespace or service account name');
  }
  return `spiffe://${identity.trustDomain}/ns/${identity.namespace}/sa/${identity.serviceAccount}`;
}

/** The parts of a workload SPIFFE ID, or undefined when `uri` is not one. */
export function parseSpiffeId(uri: string): WorkloadIdentity | undefined {
  const m = /^spiffe:\/\/([^/]+)\/ns\/([^/]+)\/sa\/([^/]+)$/.exec(uri);
  if (!m || !TRUST_DOMAIN.test(m[1]!) || !LABEL.test(m[2]!) || !LABEL.test(m[3]!)) return undefined;
  return { trustDomain: m[1]!, namespace: m[2]!, serviceAccount: m[3]! };
}

/** `system:serviceaccount:<ns>:<sa>`, the Kubernetes user name of a service account. */
export function parseServiceAccountUser(username: string): { namespace: string; serviceAccount: string } | undefined {
  const parts = username.split(':');
  if (parts.length !== 4 || parts[0] !== 'system' || parts[1] !== 'serviceaccount') return undefined;
  const [, , namespace = '', serviceAccount = ''] = parts;
  if (!LABEL.test(namespace) || !LABEL.test(serviceAccount)) return undefined;
  return { namespace, serviceAccount };
}
