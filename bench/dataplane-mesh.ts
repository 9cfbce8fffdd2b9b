/**
 * The meshed side of the data-plane benchmark, as a child process: a backend, a server sidecar
 * (mutual TLS, jwt_authn, RBAC) and a client sidecar. Reports its addresses and, on request, its
 * CPU time, over IPC.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { startTwoSidecars } from '../dataplane/testing/two-sidecars-fixture.js';

export type MeshMessage = { kind: 'ready'; proxyUrl: string; directUrl: string; token: string } | { kind: 'cpu'; micros: number };

const ISSUER = 'testing@secure.mesh.io';
const pair = await generateKeyPair('RS256');
const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' }] };
const token = await new SignJWT({ sub: 'bench' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setExpirationTime('2h').sign(pair.privateKey);

const jwtFilter = {
  name: 'envoy.filters.http.jwt_authn',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication',
    providers: { 'origins-0': { issuer: ISSUER, local_jwks: { inline_string: JSON.stringify(jwks) }, payload_in_metadata: 'payload' } },
    rules: [{ match: { prefix: '/' }, requires: { requires_any: { requirements: [{ provider_name: 'origins-0' }, { allow_missing: {} }] } } }],
    bypass_cors_preflight: true,
  },
};
const rbacFilter = {
  name: 'envoy.filters.http.rbac',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC',
    rules: {
      action: 'ALLOW',
      policies: {
        'ns[bar]-policy[require-jwt]-rule[0]': {
          permissions: [{ and_rules: { rules: [{ or_rules: { rules: [{ url_path: { path: { prefix: '/' } } }] } }] } }],
          principals: [
            {
              and_ids: {
                ids: [
                  { or_ids: { ids: [{ authenticated: { principal_name: { exact: 'spiffe://cluster.local/ns/foo/sa/sleep' } } }] } },
                  { or_ids: { ids: [{ metadata: { filter: 'envoy.filters.http.jwt_authn', path: [{ key: 'payload' }, { key: 'iss' }], value: { string_match: { exact: ISSUER } } } }] } },
                ],
              },
            },
          ],
        },
      },
    },
  },
};

const mesh = await startTwoSidecars({ subnet: 71, serverHttpFilters: [jwtFilter, rbacFilter] });
process.send?.({ kind: 'ready', proxyUrl: mesh.proxyUrl, directUrl: mesh.directUrl, token } satisfies MeshMessage);
process.on('message', (message: { cmd: 'cpu' | 'exit' }) => {
  if (message.cmd === 'cpu') {
    const usage = process.cpuUsage();
    process.send?.({ kind: 'cpu', micros: usage.user + usage.system } satisfies MeshMessage);
  } else void mesh.close().then(() => process.exit(0));
});
