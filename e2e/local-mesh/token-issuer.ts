import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/** The workload-token audience the daemon's CA accepts in the local mesh. */
export const WORKLOAD_AUDIENCE = 'mesh-ca';
/** The end-user issuer of the seed's JWT examples. */
export const END_USER_ISSUER = 'testing@secure.mesh.io';

export interface EndUserTokenOptions {
  readonly subject?: string;
  /** Seconds since the epoch; default an hour from now. */
  readonly exp?: number;
  readonly nbf?: number;
  readonly audience?: string;
  /** Signed with a key the key set does not publish: a token nobody should accept. */
  readonly foreignKey?: boolean;
}

/**
 * The local mesh's token issuer, one HTTP server with two roles: workload tokens the CA accepts
 * (`sub: system:serviceaccount:<ns>:<sa>`, OIDC discovery, key set at `/workload/jwks.json`), and
 * end-user tokens for RequestAuthentication (issuer `testing@secure.mesh.io`, key set at `/jwks.json`).
 * `GET /token` hands out an end-user token, for trying the mesh by hand.
 */
export interface TokenIssuer {
  readonly url: string;
  /** JWT_RULE for the daemon. */
  readonly jwtRule: string;
  readonly endUserJwksUri: string;
  workloadToken(namespace: string, serviceAccount: string): Promise<string>;
  endUserToken(options?: EndUserTokenOptions): Promise<string>;
  close(): Promise<void>;
}

async function keyPair(): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const pair = await generateKeyPair('RS256', { extractable: true });
  return { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), alg: 'RS256', use: 'sig' } };
}

export async function startTokenIssuer(host = '127.0.0.1', port = 0): Promise<TokenIssuer> {
  const workload = await keyPair();
  const endUser = await keyPair();
  const foreign = await keyPair();
  workload.jwk.kid = 'workload';
  endUser.jwk.kid = 'end-user';
  let base = '';
  const endUserToken = async (options: EndUserTokenOptions = {}): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT({
      sub: options.subject ?? 'testing@secure.mesh.io',
      ...(options.nbf !== undefined ? { nbf: options.nbf } : {}),
      ...(options.audience ? { aud: options.audience } : {}),
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'end-user' })
      .setIssuer(END_USER_ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(options.exp ?? now + 3600);
    return jwt.sign(options.foreignKey ? foreign.privateKey : endUser.privateKey);
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    const json = (body: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration') return json({ issuer: base, jwks_uri: `${base}/workload/jwks.json` });
    if (url.pathname === '/workload/jwks.json') return json({ keys: [workload.jwk] });
    if (url.pathname === '/jwks.json') return json({ keys: [endUser.jwk] });
    if (url.pathname === '/token') {
      const exp = url.searchParams.get('exp');
      const nbf = url.searchParams.get('nbf');
      void endUserToken({ ...(exp ? { exp: Number(exp) } : {}), ...(nbf ? { nbf: Number(nbf) } : {}) }).then((token) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`${token}\n`);
      });
      return;
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  base = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    jwtRule: JSON.stringify({ issuer: base, audiences: [WORKLOAD_AUDIENCE], jwks_uri: `${base}/workload/jwks.json` }),
    endUserJwksUri: `${base}/jwks.json`,
    async workloadToken(namespace, serviceAccount) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ sub: `system:serviceaccount:${namespace}:${serviceAccount}` })
        .setProtectedHeader({ alg: 'RS256', kid: 'workload' })
        .setIssuer(base)
        .setAudience(WORKLOAD_AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(now + 24 * 3600)
        .sign(workload.privateKey);
    },
    endUserToken,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
