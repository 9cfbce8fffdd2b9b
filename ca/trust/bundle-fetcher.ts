import { request } from 'node:https';
import type { Clock, Logger, Runnable } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import type { BundleEndpoint } from './spiffe-bundle-endpoints.js';
import { parseSpiffeBundle } from './spiffe-bundle.js';
import type { TrustBundleSet } from './trust-bundle-set.js';
import { errorMessage } from '../../runtime/index.js';

export interface BundleFetcherOptions {
  readonly endpoints: readonly BundleEndpoint[];
  /** Where fetched roots go, each for its own trust domain. */
  readonly trustBundles: TrustBundleSet;
  readonly clock: Clock;
  /** The `spiffe` scope. */
  readonly log: Logger;
  /** PEM roots that authenticate the endpoints' TLS certificates; the system roots when absent. */
  readonly tlsRootsPem?: string;
  /** The refresh interval of a bundle without `spiffe_refresh_hint`, and the longest retry delay. Default 5 min. */
  readonly defaultRefreshMs?: number;
  /** Bounds on a bundle's refresh hint. Default 10 s and 24 h. */
  readonly minRefreshMs?: number;
  readonly maxRefreshMs?: number;
  /** The retry delay after a first failure, doubled after each further one. Default 1 s. */
  readonly initialBackoffMs?: number;
  /** A fetch is abandoned after this long. Default 10 s. */
  readonly timeoutMs?: number;
  /** Larger answers are refused. Default 1 MiB. */
  readonly maxBundleBytes?: number;
}

export interface BundleFetchStatus {
  readonly trustDomain: string;
  readonly url: string;
  /** Roots of the last good bundle; 0 until one was fetched. */
  readonly roots: number;
  readonly sequence?: number;
  readonly lastSuccessMs?: number;
  readonly lastError?: string;
  readonly consecutiveFailures: number;
  readonly nextFetchMs?: number;
}

/** Keeps the bundles of SPIFFE_BUNDLE_ENDPOINTS fresh in a TrustBundleSet. */
export interface BundleFetcher extends Runnable {
  status(): BundleFetchStatus[];
}

interface EndpointState {
  roots: number;
  sequence?: number;
  lastSuccessMs?: number;
  lastError?: string;
  consecutiveFailures: number;
  nextFetchMs?: number;
}

/**
 * Fetches each foreign trust domain's bundle over HTTPS at start, then again after its
 * `spiffe_refresh_hint` (bounded) or the default interval. A failed fetch or an unusable
 * bundle keeps the last good roots and is retried with exponential backoff. Ready once every
 * endpoint has been tried once, so peers of federated domains are known before serving.
 */
export function newBundleFetcher(options: BundleFetcherOptions): BundleFetcher {
  const { endpoints, trustBundles, clock, log } = options;
  const defaultRefreshMs = options.defaultRefreshMs ?? 5 * 60_000;
  const minRefreshMs = options.minRefreshMs ?? 10_000;
  const maxRefreshMs = options.maxRefreshMs ?? 24 * 3_600_000;
  const initialBackoffMs = options.initialBackoffMs ?? 1000;
  const states = new Map<BundleEndpoint, EndpointState>(endpoints.map((e) => [e, { roots: 0, consecutiveFailures: 0 }]));
  let tried = 0;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  if (endpoints.length === 0) markReady();

  /** One fetch; returns the delay before the next one. */
  const attempt = async (endpoint: BundleEndpoint, state: EndpointState, signal: AbortSignal): Promise<number> => {
    const fields = { trustDomain: endpoint.trustDomain, url: endpoint.url };
    try {
      const text = await fetchBundleText(endpoint.url, {
        clock,
        signal,
        timeoutMs: options.timeoutMs ?? 10_000,
        maxBytes: options.maxBundleBytes ?? 1 << 20,
        ...(options.tlsRootsPem === undefined ? {} : { tlsRootsPem: options.tlsRootsPem }),
      });
      const bundle = parseSpiffeBundle(text);
      const changed = trustBundles.setFederatedRoots(endpoint.trustDomain, bundle.roots);
      state.roots = bundle.roots.length;
      state.lastSuccessMs = clock.now();
      state.consecutiveFailures = 0;
      delete state.lastError;
      if (bundle.sequence === undefined) delete state.sequence;
      else state.sequence = bundle.sequence;
      const refreshMs = Math.min(maxRefreshMs, Math.max(minRefreshMs, bundle.refreshHintMs ?? defaultRefreshMs));
      if (changed) log.info({ ...fields, roots: bundle.roots.length, sequence: bundle.sequence, refreshMs }, 'trust bundle of a federated domain updated');
      else log.debug({ ...fields, refreshMs }, 'trust bundle of a federated domain unchanged');
      return refreshMs;
    } catch (err) {
      if (signal.aborted) throw err;
      state.consecutiveFailures++;
      state.lastError = errorMessage(err);
      const retryMs = Math.min(defaultRefreshMs, initialBackoffMs * 2 ** Math.min(state.consecutiveFailures - 1, 30));
      log.warn(
        { ...fields, error: state.lastError, failures: state.consecutiveFailures, retryMs, keptRoots: state.roots },
        'fetching the trust bundle of a federated domain failed',
      );
      return retryMs;
    }
  };

  const loop = async (endpoint: BundleEndpoint, signal: AbortSignal): Promise<void> => {
    const state = states.get(endpoint)!;
    let first = true;
    try {
      for (;;) {
        const delayMs = await attempt(endpoint, state, signal);
        if (first) {
          first = false;
          if (++tried === endpoints.length) markReady();
        }
        state.nextFetchMs = clock.now() + delayMs;
        await clock.sleep(delayMs, signal);
      }
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    }
  };

  return {
    name: 'spiffe-bundle-fetcher',
    waitForReady: (signal) =>
      Promise.race([
        ready,
        new Promise<void>((_, reject) => {
          if (signal.aborted) reject(signal.reason);
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
      ]),
    start: async (signal) => {
      await Promise.all(endpoints.map((endpoint) => loop(endpoint, signal)));
    },
    status: () => endpoints.map((endpoint) => ({ trustDomain: endpoint.trustDomain, url: endpoint.url, ...states.get(endpoint)! })),
  };
}

export interface FetchBundleOptions {
  readonly clock: Clock;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly tlsRootsPem?: string;
}

/** GET over HTTPS, one connection, no redirects; the body of a 200 answer as text. */
export async function fetchBundleText(url: string, options: FetchBundleOptions): Promise<string> {
  const { clock, signal } = options;
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  const timer = clock.setTimer(() => controller.abort(), options.timeoutMs);
  try {
    return await new Promise<string>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'GET',
          agent: false,
          signal: controller.signal,
          headers: { accept: 'application/json, application/x-pem-file;q=0.9' },
          ...(options.tlsRootsPem === undefined ? {} : { ca: options.tlsRootsPem }),
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            reject(new CaError('ca-unavailable', `the bundle endpoint answered HTTP ${res.statusCode ?? 0}`));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > options.maxBytes) req.destroy(new CaError('ca-unavailable', `the bundle is larger than ${options.maxBytes} bytes`));
            else chunks.push(chunk);
          });
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
  } catch (err) {
    if (controller.signal.aborted && !signal.aborted) {
      throw new CaError('ca-unavailable', `the bundle endpoint did not answer within ${options.timeoutMs} ms`, { cause: err });
    }
    throw err;
  } finally {
    timer.cancel();
    signal.removeEventListener('abort', onAbort);
  }
}
