import { ServerCredentials } from '@grpc/grpc-js';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, test } from '@jest/globals';
import { DAEMON_SCOPES, loadSettings, newLogging, newManager, newNopLogger, parseLevelSpec } from '../runtime/index.js';
import { CaError } from './ca-error.js';
import { setupCaDisabledWithManager, type CaDisabledSetupOptions } from './ca-disabled-setup.js';

const RULE = '{"issuer": "https://issuer.example", "audiences": ["mesh-ca"]}';

function setup(env: Record<string, string>, extra: Partial<CaDisabledSetupOptions> = {}) {
  const manager = newManager({ log: newNopLogger() });
  return setupCaDisabledWithManager(manager, {
    settings: loadSettings('pilot-discovery', { ENABLE_CA_SERVER: 'false', ...env }),
    trustDomain: 'cluster.local',
    cipherSuites: [],
    logging: newLogging({ outputLevels: parseLevelSpec('default:none') }, DAEMON_SCOPES),
    ...extra,
  });
}

function kubeConfig(): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return config;
}

describe('the daemon without a CA (ENABLE_CA_SERVER=false)', () => {
  test.each([
    ['local mode', {}, false, ['client-cert']],
    ['Kubernetes mode', {}, true, ['client-cert', 'kube-token']],
    ['JWT_RULE', { JWT_RULE: RULE }, false, ['client-cert', 'oidc-jwt']],
    [
      'Kubernetes mode and TOKEN_ISSUER/AUDIENCE',
      { TOKEN_ISSUER: 'https://issuer.example', AUDIENCE: 'mesh-ca' },
      true,
      ['client-cert', 'kube-token', 'oidc-jwt'],
    ],
  ])('%s: callers are authenticated as with a CA, in the reference’s kinds', (_, env, inCluster, names) => {
    const security = setup(env, inCluster ? { kubeConfig: kubeConfig() } : {});
    expect(security.authenticators.map((authenticator) => authenticator.name)).toEqual(names);
  });

  test('a bad JWT_RULE stops the daemon from starting, as the reference', () => {
    expect(() => setup({ JWT_RULE: '{' })).toThrow(CaError);
  });

  test('nothing is served over TLS without --tlsCertFile; with it, credentials and the webhooks’ certificate come from the files', () => {
    expect(setup({}).serving).toBeUndefined();
    const serving = setup(
      {},
      { tlsFiles: { certFile: '/nonexistent/tls.crt', keyFile: '/nonexistent/tls.key', caCertFile: '/nonexistent/root-cert.pem' } },
    ).serving;
    expect(serving?.credentials()).toBeInstanceOf(ServerCredentials);
    expect(serving?.servingProviders().roots).not.toBeNull();
    const withoutRoots = setup({}, { tlsFiles: { certFile: '/nonexistent/tls.crt', keyFile: '/nonexistent/tls.key' } }).serving;
    expect(withoutRoots?.servingProviders().roots).toBeNull();
  });
});
