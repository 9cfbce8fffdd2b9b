import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { JwksFetchError, type JwksAddressCheck } from './jwks-address-check.js';

/** The largest JWKS (or discovery document) body read; real ones are a few kilobytes. */
export const MAX_JWKS_BODY_BYTES = 1024 * 1024;

/** One GET: the status and the body as text. Never follows a redirect (a 3xx is an answer like any other). */
export type JwksGet = (url: URL, uri: string, timeoutMs: number) => Promise<{ readonly status: number; readonly body: string }>;

export interface DialCheckedGetOptions {
  /** Name resolution, the same the pre-check uses. */
  readonly resolve: (host: string) => Promise<string[]>;
  readonly check: JwksAddressCheck;
  /** Trust roots for https instead of the system's (tests). */
  readonly tlsRootsPem?: string;
}

/**
 * The `lookup` that `net.connect` calls for a hostname: it resolves the name again, refuses when ANY
 * answer is refused (the error names the address and the range, as the pre-check does) and hands
 * back only the checked addresses. The connection dials an address this check passed, however the
 * DNS answer changed since the pre-check (rebinding), as the reference's dialer does. IP literals
 * are not looked up: the pre-check saw them, and they cannot change.
 */
export function checkedLookup(uri: string, options: DialCheckedGetOptions): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    options.resolve(hostname).then(
      (addresses) => {
        const refusal = options.check.refusal(uri, addresses);
        if (refusal) return callback(refusal, '');
        const wanted =
          lookupOptions.family === 6 || lookupOptions.family === 'IPv6' ? 6 : lookupOptions.family === 4 || lookupOptions.family === 'IPv4' ? 4 : 0;
        const found: LookupAddress[] = addresses
          .map((address) => ({ address, family: isIP(address) }))
          .filter((entry) => entry.family !== 0 && (wanted === 0 || entry.family === wanted));
        const first = found[0];
        if (!first) return callback(Object.assign(new Error(`"${uri}": ${hostname} has no usable address`), { code: 'ENOTFOUND' }), '');
        if (lookupOptions.all) return callback(null, found);
        return callback(null, first.address, first.family);
      },
      (error: unknown) => callback(Object.assign(new Error(`"${uri}": cannot resolve ${hostname}`, { cause: error }), { code: 'ENOTFOUND' }), ''),
    );
  };
}

/**
 * The daemon's JWKS GET with node:http/node:https, dialling only what `checkedLookup` passed. TLS
 * still verifies the certificate against the URL's hostname (SNI = hostname): only the lookup is
 * replaced. One connection per GET (no pool: a pooled socket would skip the lookup). A body over
 * `MAX_JWKS_BODY_BYTES` is refused: a key set is a few kilobytes, and whoever writes a jwksUri
 * must not be able to make the daemon buffer an endless answer.
 */
export function dialCheckedGet(options: DialCheckedGetOptions): JwksGet {
  return (url, uri, timeoutMs) =>
    new Promise((resolve, reject) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const tls = url.protocol === 'https:' && options.tlsRootsPem !== undefined ? { ca: options.tlsRootsPem } : {};
      let settled = false;
      const finish = (error: Error | undefined, answer?: { status: number; body: string }): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) {
          req.destroy();
          reject(error);
        } else if (answer) resolve(answer);
      };
      const timer = setTimeout(() => finish(new JwksFetchError(`GET ${uri}: no answer within ${timeoutMs} ms`)), timeoutMs);
      const req = send(
        url,
        { method: 'GET', agent: false, lookup: checkedLookup(uri, options), headers: { accept: 'application/json' }, ...tls },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_JWKS_BODY_BYTES) return finish(new JwksFetchError(`GET ${uri}: the answer is larger than ${MAX_JWKS_BODY_BYTES} bytes`));
            chunks.push(chunk);
          });
          res.on('error', (error) => finish(error));
          res.on('end', () => finish(undefined, { status: res.statusCode ?? 0, body: new TextDecoder().decode(Buffer.concat(chunks)) }));
          res.on('close', () => {
            if (!res.complete) finish(new JwksFetchError(`GET ${uri}: the answer was cut short`));
          });
        },
      );
      req.on('error', (error) => finish(error));
      req.end();
    });
}
