import { describe, expect, test } from '@jest/globals';
import { loadSettings } from '../runtime/index.js';
import {
  adminEndpointsFromSettings,
  jwksBlockedCidrsFromSettings,
  jwksRefreshFromSettings,
  jwksRemoteFromSettings,
  meshGeneratorSettingsFromSettings,
} from './xds-settings.js';

const daemon = (env: Record<string, string>) => loadSettings('pilot-discovery', env);

describe('the xDS settings', () => {
  test("the generators' switches", () => {
    expect(
      meshGeneratorSettingsFromSettings(
        daemon({ PILOT_SCOPE_GATEWAY_TO_NAMESPACE: 'true', PILOT_USE_TARGET_PORT_FOR_GATEWAY_ROUTES: 'false', MESH_DEFAULT_REQUEST_TIMEOUT: '2.5s' }),
      ),
    ).toEqual({
      skipValidateTrustDomain: false,
      scopeToNamespace: true,
      useTargetPortForRoutes: false,
      filterGatewayClusters: false,
      collapseRoutes: true,
      stripHostPort: false,
      defaultRequestTimeoutMs: 2500,
      acceptHttp10: false,
      edsForHeadless: false,
      headlessPodListeners: true,
      sidecarUseRemoteAddress: false,
      inboundPassthrough: true,
      delayedCloseTimeoutMs: 1000,
    });
  });

  test('the key set refresh and the admin endpoints', () => {
    const settings = daemon({ PILOT_JWT_PUB_KEY_REFRESH_INTERVAL: '5m', UNSAFE_ENABLE_ADMIN_ENDPOINTS: 'true' });
    expect(jwksRefreshFromSettings(settings)).toEqual({ refreshIntervalMs: 300_000 });
    expect(adminEndpointsFromSettings(settings)).toEqual({ unsafeAdminEndpoints: true });
  });

  test('who fetches the key sets of mesh Services: the daemon by default, the proxies with PILOT_JWT_ENABLE_REMOTE_JWKS', () => {
    expect(jwksRemoteFromSettings(daemon({}))).toEqual({ remoteJwks: false });
    expect(jwksRemoteFromSettings(daemon({ PILOT_JWT_ENABLE_REMOTE_JWKS: 'true' }))).toEqual({ remoteJwks: true });
  });

  test('the ranges no key set is fetched from: none by default', () => {
    expect(jwksBlockedCidrsFromSettings(daemon({}))).toEqual({ blockedCidrs: [] });
    expect(jwksBlockedCidrsFromSettings(daemon({ BLOCKED_CIDRS_IN_JWKS_URIS: '10.0.0.0/8, fd00::/8' }))).toEqual({
      blockedCidrs: [
        { text: '10.0.0.0/8', address: '10.0.0.0', prefix: 8, family: 'ipv4' },
        { text: 'fd00::/8', address: 'fd00::', prefix: 8, family: 'ipv6' },
      ],
    });
  });

  test('a bad value is refused naming its setting', () => {
    expect(() => jwksRefreshFromSettings(daemon({ PILOT_JWT_PUB_KEY_REFRESH_INTERVAL: '-1s' }))).toThrow(/for PILOT_JWT_PUB_KEY_REFRESH_INTERVAL/);
    expect(() => daemon({ BLOCKED_CIDRS_IN_JWKS_URIS: '10.0.0.0/8,169.254.169.254' })).toThrow(
      'invalid value "10.0.0.0/8,169.254.169.254" for BLOCKED_CIDRS_IN_JWKS_URIS: expected comma-separated CIDR ranges such as 10.0.0.0/8,fd00::/8; "169.254.169.254" is not one',
    );
  });
});
