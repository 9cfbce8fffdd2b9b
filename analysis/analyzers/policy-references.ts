import type { AuthorizationPolicySpec } from '../../crds/index.js';

/** A namespace and service account named by an AuthorizationPolicy, with the value that names them. */
export interface IdentityReference {
  readonly value: string;
  readonly namespace: string;
  /** Absent when only the namespace is named. */
  readonly serviceAccount?: string;
}

const PRINCIPAL = /^(?:spiffe:\/\/)?[^/]+\/ns\/([^/]+)\/sa\/([^/]+)$/;

/** `spiffe://<td>/ns/<ns>/sa/<sa>` or `<td>/ns/<ns>/sa/<sa>`; undefined for other forms and for wildcards in the namespace. */
export function principalReference(value: string): IdentityReference | undefined {
  const match = PRINCIPAL.exec(value);
  if (match === null) return undefined;
  const [, namespace = '', serviceAccount = ''] = match;
  if (namespace.includes('*')) return undefined;
  return serviceAccount.includes('*') ? { value, namespace } : { value, namespace, serviceAccount };
}

/** `serviceAccounts` entries: `<ns>/<sa>`, or `<sa>` of the policy's namespace. */
function serviceAccountReference(value: string, policyNamespace: string): IdentityReference {
  const [first = '', second] = value.split('/');
  return second === undefined ? { value, namespace: policyNamespace, serviceAccount: first } : { value, namespace: first, serviceAccount: second };
}

/** Every identity named by principals, service accounts and their conditions, in the forms that name a namespace. */
export function identitiesNamed(spec: AuthorizationPolicySpec, policyNamespace: string): IdentityReference[] {
  const out: IdentityReference[] = [];
  const principals = (values: readonly string[] | undefined): void => {
    for (const value of values ?? []) {
      const reference = principalReference(value);
      if (reference !== undefined) out.push(reference);
    }
  };
  const serviceAccounts = (values: readonly string[] | undefined): void => {
    for (const value of values ?? []) out.push(serviceAccountReference(value, policyNamespace));
  };
  for (const rule of spec.rules ?? []) {
    for (const from of rule.from ?? []) {
      principals(from.source?.principals);
      principals(from.source?.notPrincipals);
      serviceAccounts(from.source?.serviceAccounts);
      serviceAccounts(from.source?.notServiceAccounts);
    }
    for (const condition of rule.when ?? []) {
      if (condition.key === 'source.principal') {
        principals(condition.values);
        principals(condition.notValues);
      } else if (condition.key === 'source.serviceAccount') {
        serviceAccounts(condition.values);
        serviceAccounts(condition.notValues);
      }
    }
  }
  return [...new Map(out.map((reference) => [reference.value, reference])).values()];
}
