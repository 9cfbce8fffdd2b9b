import { generateKeyPairSync } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { importJWK, type JWK } from 'jose';
import type { JwtRule } from '../../crds/index.js';
import type { Cidr, Clock, Logger, MeshMetrics } from '../../runtime/index.js';
import { errorMessage } from '../../runtime/index.js';
import { JwksFetchError, newJwksAddressCheck } from './jwks-address-check.js';
import { dialCheckedGet, type JwksGet } from './jwks-dial.js';
import type { JwksSource } from './jwt-authn-builder.js';

export { JwksFetchError } from './jwks-address-check.js';

export interface JwksResolverOptions {
  /** PILOT_JWT_PUB_KEY_REFRESH_INTERVAL. */
  readonly refreshIntervalMs: number;
  /** First retry after a failed fetch; doubles up to `maxRetryMs`. Defaults 1 min and 60 min, as the reference. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
  readonly timeoutMs?: number;
  /** A key set changed: the daemon pushes. */
  readonly onChange: () => void;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: MeshMetrics<'pilot-discovery'>;
  /**
   * BLOCKED_CIDRS_IN_JWKS_URIS: nothing is fetched from a host any of whose addresses is inside one
   * of these, checked again at every fetch (a rebinding DNS answer changes between refreshes), and
   * once more on the addresses the connection dials (a rebinding answer changes within a fetch).
   */
  readonly blockedCidrs?: readonly Cidr[];
  /**
   * Injected for tests only: with it, the addresses are checked before the fetch but the
   * connection's own lookup is not (the injected fetch resolves as it likes). Without it (the
   * daemon), the GET dials only addresses that passed the check at connect time.
   */
  readonly fetch?: typeof fetch;
  /** Name resolution, injected for tests. */
  readonly resolve?: (host: string) => Promise<string[]>;
}

export interface JwksResolver extends JwksSource {
  /** Fetches now (tests, and the first use). */
  refresh(uriOrIssuer: string): Promise<void>;
  close(): void;
}

const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** The injected `fetch` as a JwksGet: a redirect is an error, the body read as text. */
function viaFetch(fetchFn: typeof fetch): JwksGet {
  return async (url, _uri, timeoutMs) => {
    const signal = AbortSignal.timeout(timeoutMs);
    const response = await fetchFn(url, { signal, redirect: 'error' });
    return { status: response.status, body: await response.text() };
  };
}

/** A key set with one public key whose private half was thrown away: it verifies no token (fail closed). */
function failClosedKeySet(): string {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  return JSON.stringify({ keys: [{ ...jwk, kid: 'mesh-fail-closed', alg: 'RS256', use: 'sig' }] });
}

interface Entry {
  keySet?: string;
  fetching?: Promise<void>;
  timer?: { cancel(): void };
  failures: number;
}

/**
 * The daemon's JWKS resolver: fetches each rule's `jwksUri` (or the issuer's OpenID discovery
 * document), caches it, refreshes it every interval, backs off after failures and calls
 * `onChange` when a key set changes. Until a key set is known, or when it cannot be fetched, the
 * inlined set verifies nothing: any token gets 401 while a request without one still passes.
 * Link-local and cloud-metadata addresses are refused, so are the ranges of BLOCKED_CIDRS_IN_JWKS_URIS,
 * and so is any answer that is not a key set.
 */
export function newJwksResolver(options: JwksResolverOptions): JwksResolver {
  const resolveHost = options.resolve ?? (async (host: string) => (await lookup(host, { all: true })).map((entry) => entry.address));
  const check = newJwksAddressCheck(options.blockedCidrs ?? []);
  const get: JwksGet = options.fetch ? viaFetch(options.fetch) : dialCheckedGet({ resolve: resolveHost, check });
  // Made when first needed: an RSA key takes a tenth of a second or more, and most daemons need none.
  let failClosedSet: string | undefined;
  const failClosed = (): string => (failClosedSet ??= failClosedKeySet());
  const entries = new Map<string, Entry>();
  const retryMs = options.retryMs ?? 60_000;
  const maxRetryMs = options.maxRetryMs ?? 3_600_000;
  const timeoutMs = options.timeoutMs ?? 5000;
  let closed = false;

  const checkUrl = async (text: string): Promise<URL> => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new JwksFetchError(`"${text}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new JwksFetchError(`"${text}": only http and https are fetched`);
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (METADATA_HOSTS.has(host)) throw new JwksFetchError(`"${text}": cloud metadata hosts are refused`);
    // The pre-check, for a clear refusal before any socket; the connection checks again what it dials.
    // Every address, not only the one a connection would use: any of them may be the one dialled.
    const refusal = check.refusal(text, isIP(host) ? [host] : await resolveHost(host));
    if (refusal) throw refusal;
    return url;
  };

  const getJson = async (text: string): Promise<unknown> => {
    const url = await checkUrl(text);
    const { status, body } = await get(url, text, timeoutMs);
    if (status >= 300 && status < 400) throw new JwksFetchError(`GET ${text}: status ${status}, redirects are not followed`);
    if (status < 200 || status > 299) throw new JwksFetchError(`GET ${text}: status ${status}`);
    try {
      return JSON.parse(body) as unknown;
    } catch {
      throw new JwksFetchError(`GET ${text}: the answer is not JSON`);
    }
  };

  const fetchKeySet = async (key: string): Promise<string> => {
    let jwksUri = key;
    if (key.startsWith('issuer:')) {
      const issuer = key.slice('issuer:'.length).replace(/\/$/, '');
      const discovery = (await getJson(`${issuer}/.well-known/openid-configuration`)) as { jwks_uri?: unknown };
      if (typeof discovery?.jwks_uri !== 'string') throw new JwksFetchError(`${issuer}: the discovery document names no jwks_uri`);
      jwksUri = discovery.jwks_uri;
    }
    const body = (await getJson(jwksUri)) as { keys?: unknown };
    if (!body || !Array.isArray(body.keys) || body.keys.length === 0) throw new JwksFetchError(`GET ${jwksUri}: the answer is not a key set`);
    for (const jwk of body.keys as JWK[]) {
      try {
        await importJWK(jwk, typeof jwk.alg === 'string' ? jwk.alg : jwk.kty === 'EC' ? 'ES256' : 'RS256');
      } catch (error) {
        throw new JwksFetchError(`GET ${jwksUri}: a key cannot be used (${errorMessage(error)})`);
      }
    }
    return JSON.stringify({ keys: body.keys });
  };

  const schedule = (key: string, entry: Entry, delayMs: number): void => {
    entry.timer?.cancel();
    if (closed) return;
    entry.timer = options.clock.setTimer(() => void refresh(key), delayMs);
  };

  const refresh = (key: string): Promise<void> => {
    let entry = entries.get(key);
    if (!entry) entries.set(key, (entry = { failures: 0 }));
    const current = entry;
    current.fetching ??= fetchKeySet(key)
      .then((keySet) => {
        options.metrics.counter('pilot_jwks_resolver_network_fetch_success_total').inc();
        current.failures = 0;
        const changed = keySet !== current.keySet;
        current.keySet = keySet;
        schedule(key, current, options.refreshIntervalMs);
        if (changed) options.onChange();
      })
      .catch((error: Error) => {
        options.metrics.counter('pilot_jwks_resolver_network_fetch_fail_total').inc();
        current.failures++;
        const fields = error instanceof JwksFetchError ? error.fields : {};
        options.log.warn(
          { key, error: error.message, failures: current.failures, ...fields },
          'cannot fetch the JWKS; tokens of this issuer are refused until it can',
        );
        schedule(key, current, Math.min(retryMs * 2 ** (current.failures - 1), maxRetryMs));
      })
      .finally(() => {
        current.fetching = undefined;
      });
    return current.fetching;
  };

  return {
    keySetFor(rule: JwtRule) {
      if (rule.jwks) return rule.jwks;
      const key = rule.jwksUri ?? (rule.issuer ? `issuer:${rule.issuer}` : undefined);
      if (!key) return failClosed();
      const entry = entries.get(key);
      if (!entry) void refresh(key);
      return entry?.keySet ?? failClosed();
    },
    refresh,
    close() {
      closed = true;
      for (const entry of entries.values()) entry.timer?.cancel();
    },
  };
}
