import { isPlainObject } from './object-util.js';
import type { JsonObject } from './object-util.js';

/**
 * A request the double refuses, as RBAC names it. An absent field matches anything: `{ verb:
 * 'create', resource: 'namespaces' }` refuses creating namespaces, `{ group: 'apps' }` refuses
 * everything of the apps group.
 */
export interface AccessDenial {
  verb?: string;
  /** `''` for the core group. */
  group?: string;
  /** The plural, with `/<subresource>` to name one (`deployments/scale`). */
  resource?: string;
  namespace?: string;
}

export interface AccessAttributes {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
}

/** The denials in force: every request is allowed unless one matches. */
export class AccessRules {
  private denials: readonly AccessDenial[] = [];

  get hasDenials(): boolean {
    return this.denials.length > 0;
  }

  set(denials: readonly AccessDenial[]): void {
    this.denials = denials.map((d) => ({ ...d }));
  }

  isDenied(request: AccessAttributes): boolean {
    return this.denials.some(
      (d) =>
        (d.verb === undefined || d.verb === request.verb) &&
        (d.group === undefined || d.group === request.group) &&
        (d.resource === undefined || d.resource === request.resource) &&
        (d.namespace === undefined || d.namespace === (request.namespace ?? '')),
    );
  }

  /**
   * The `status` of a SelfSubjectAccessReview or SubjectAccessReview: what the double would do with
   * the request its `spec.resourceAttributes` describe (non-resource requests are always allowed).
   */
  reviewStatus(spec: JsonObject): JsonObject {
    const attributes = isPlainObject(spec['resourceAttributes']) ? spec['resourceAttributes'] : undefined;
    if (!attributes) return { allowed: true, reason: 'the API server double allows every non-resource request' };
    const text = (key: string): string => (typeof attributes[key] === 'string' ? attributes[key] : '');
    const subresource = text('subresource');
    const request = {
      verb: text('verb'),
      group: text('group'),
      resource: subresource ? `${text('resource')}/${subresource}` : text('resource'),
      namespace: text('namespace'),
    };
    // The real RBAC authorizer gives no reason for a denial it has no rule for.
    return this.isDenied(request) ? { allowed: false } : { allowed: true, reason: 'the API server double allows every request' };
  }
}

/** The message of the real API server's 403 for a refused request. */
export function forbiddenMessage(request: AccessAttributes & { name?: string }, username: string): string {
  const [plural, subresource] = request.resource.split('/');
  const qualified = request.group === '' ? (plural ?? '') : `${plural ?? ''}.${request.group}`;
  const subject = `${qualified}${request.name ? ` "${request.name}"` : ''}`;
  const scope = request.namespace ? `in the namespace "${request.namespace}"` : 'at the cluster scope';
  const resource = subresource ? `resource "${plural ?? ''}/${subresource}"` : `resource "${plural ?? ''}"`;
  return `${subject} is forbidden: User "${username}" cannot ${request.verb} ${resource} in API group "${request.group}" ${scope}`;
}
