/**
 * The meshed side of the data-plane benchmark, as a child process: a backend, a server sidecar
 * (mutual TLS, jwt_authn, RBAC) and a client sidecar. Reports its addresses and, on request, its
 * CPU time, over IPC.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { jwtPolicies, startTwoSidecars } from '../dataplane/testing/two-sidecars-fixture.js';

export type MeshMessage = { kind: 'ready'; proxyUrl: string; directUrl: string; token: string } | { kind: 'cpu'; micros: number };

const ISSUER = 'testing@secure.mesh.io';
const pair = await generateKeyPair('RS256');
const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256' }] };
const token = await new SignJWT({ sub: 'bench' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(ISSUER).setExpirationTime('2h').sign(pair.privateKey);

const mesh = await startTwoSidecars({ subnet: 71, serverPolicies: jwtPolicies(ISSUER, JSON.stringify(jwks)) });
process.send?.({ kind: 'ready', proxyUrl: mesh.proxyUrl, directUrl: mesh.directUrl, token } satisfies MeshMessage);
process.on('message', (message: { cmd: 'cpu' | 'exit' }) => {
  if (message.cmd === 'cpu') {
    const usage = process.cpuUsage();
    process.send?.({ kind: 'cpu', micros: usage.user + usage.system } satisfies MeshMessage);
  } else void mesh.close().then(() => process.exit(0));
});
