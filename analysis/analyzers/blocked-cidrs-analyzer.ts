import { DAEMON_CONTAINER, DAEMON_NAME } from '../../names/index.js';
import type { Analyzer } from '../analyzer.js';

const SETTING = 'BLOCKED_CIDRS_IN_JWKS_URIS';
/** How many RequestAuthentications the message names before `and N more`, as the reference. */
const MAX_NAMED = 5;

/**
 * MSH0175, the reference's authn.BlockedCIDRsAnalyzer (IST0175): RequestAuthentications exist but
 * a daemon Deployment (label `app: meshd`, any revision) does not give its discovery container a
 * non-empty BLOCKED_CIDRS_IN_JWKS_URIS, so whoever writes one can make the daemon fetch internal
 * addresses. Every RequestAuthentication counts, as in the reference: one naming only an issuer
 * is fetched too (its discovery document). Without a daemon Deployment in the inputs (files
 * alone) nothing is reported.
 */
export const blockedCidrsAnalyzer: Analyzer = {
  name: 'authn.BlockedCIDRsAnalyzer',
  description: `Checks that ${SETTING} is configured on the daemon when RequestAuthentication resources exist`,
  inputs: ['RequestAuthentication', 'Deployment'],
  analyze(context) {
    const names = context
      .read('RequestAuthentication')
      .map((resource) => `${resource.namespace}/${resource.name}`)
      .sort();
    if (names.length === 0) return;
    const listed = names.length <= MAX_NAMED ? names.join(', ') : `${names.slice(0, MAX_NAMED).join(', ')}, and ${names.length - MAX_NAMED} more`;
    for (const deployment of context.read('Deployment')) {
      if (deployment.object.metadata?.labels?.['app'] !== DAEMON_NAME) continue;
      const discovery = deployment.object.spec?.template.spec?.containers.find((container) => container.name === DAEMON_CONTAINER);
      if ((discovery?.env ?? []).some((env) => env.name === SETTING && (env.value ?? '') !== '')) continue;
      context.report(
        'JwksUriFetchUnrestricted',
        deployment,
        `${SETTING} is not configured but ${names.length} RequestAuthentication resource(s) exist (${listed}). ` +
          'Consider configuring it to restrict JWKS URI fetches to trusted networks.',
      );
    }
  },
};
