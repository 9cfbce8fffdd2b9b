import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { JwksFetcher, UpstreamDecision } from './decisions/index.js';
import type { SecretSet } from './sds-subscriber.js';
import { upstreamTlsOptions, type UpstreamAgents } from './upstream-connector.js';

export interface JwksFetchOptions {
  /** An endpoint of a cluster, by the proxy's current clusters and endpoints (round robin). */
  upstream(cluster: string): UpstreamDecision;
  secrets(): SecretSet;
  agents: UpstreamAgents;
}

/** The largest key set taken: a remote answering more is refused as a failed fetch. */
const MAX_JWKS_BYTES = 1 << 20;

/**
 * The data plane's fetch of a remote key set (jwt_authn `remote_jwks`): the cluster the provider
 * names is resolved through the proxy's own clusters and endpoints (with the cluster's TLS), and
 * the URI's path asked for with its host as `Host`; anything but a 200 within the timeout fails.
 */
export function newJwksFetcher(options: JwksFetchOptions): JwksFetcher {
  return ({ cluster, uri, timeoutMs }) =>
    new Promise((resolve, reject) => {
      const decision = options.upstream(cluster);
      if (decision.kind !== 'endpoint') return reject(new Error(`cluster ${cluster} has no endpoint to fetch from (${decision.kind})`));
      const url = new URL(uri);
      const tls = decision.tls.kind === 'tls' ? upstreamTlsOptions(decision.tls, options.secrets(), options.agents.secureContexts) : undefined;
      const send = tls ? httpsRequest : httpRequest;
      const req = send({
        host: decision.address,
        port: decision.port,
        method: 'GET',
        path: `${url.pathname}${url.search}`,
        headers: { host: url.host, accept: 'application/json' },
        agent: decision.tls.kind === 'tls' ? options.agents.tlsFor(decision.tls) : options.agents.plain,
        timeout: timeoutMs,
        ...(tls ?? {}),
      });
      req.on('timeout', () => req.destroy(new Error(`fetching ${uri} timed out`)));
      req.on('error', reject);
      req.on('response', (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_JWKS_BYTES) req.destroy(new Error(`${uri} answered more than ${MAX_JWKS_BYTES} bytes`));
          else chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () => {
          if (response.statusCode !== 200) reject(new Error(`${uri} answered ${response.statusCode ?? 'nothing'}`));
          else resolve(Buffer.concat(chunks).toString('utf8'));
        });
      });
      req.end();
    });
}
