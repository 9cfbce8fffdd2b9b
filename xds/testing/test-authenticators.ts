import type { XdsAuthenticator } from '../xds-auth.js';

/**
 * The bearer tokens of xDS tests: `token:<namespace>:<service account>` stands for that service
 * account's workload; no token is no identity; anything else is a bad credential (it throws).
 */
export const testTokenAuthenticator: XdsAuthenticator = {
  name: 'test-token',
  async authenticate({ bearerToken }) {
    if (bearerToken === undefined) return undefined;
    const [kind, namespace, serviceAccount] = bearerToken.split(':');
    if (kind !== 'token' || !namespace || !serviceAccount) throw new Error('malformed token');
    return { identities: [`spiffe://cluster.local/ns/${namespace}/sa/${serviceAccount}`] };
  },
};
