import type { HttpRoute } from '../../crds/index.js';
import { envoyDuration } from '../envoy/envoy-duration.js';

type HttpRetry = NonNullable<HttpRoute['retries']>;

const DEFAULT_RETRY_ON = 'connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes';

/**
 * The reference's default outbound retry policy: two retries on connection failures and 503.
 * Its `previous_hosts` retry host predicate is left out: that extension's proto is not among the
 * ones we load.
 */
export function defaultRetryPolicy(): Record<string, unknown> {
  return { retry_on: DEFAULT_RETRY_ON, num_retries: { value: 2 }, retriable_status_codes: [503], host_selection_retry_max_attempts: 5 };
}

/**
 * An Envoy `RetryPolicy` from VirtualService `retries`, as the reference: absent means the
 * default policy, zero attempts means none (undefined), otherwise the default overridden by the
 * given fields. Numbers in `retryOn` are status codes (adding `retriable-status-codes`).
 */
export function buildRetryPolicy(retries: HttpRetry | undefined): Record<string, unknown> | undefined {
  if (retries === undefined) return defaultRetryPolicy();
  if ((retries.attempts ?? 0) <= 0) return undefined;
  const out: Record<string, unknown> = { ...defaultRetryPolicy(), num_retries: { value: retries.attempts } };
  if (retries.retryOn !== undefined && retries.retryOn !== '') {
    const conditions: string[] = [];
    const codes: number[] = [];
    for (const part of retries.retryOn.split(',').map((text) => text.trim())) {
      if (part === '') continue;
      if (/^[0-9]+$/.test(part)) codes.push(Number(part));
      else conditions.push(part);
    }
    let retryOn = conditions.join(',');
    if (codes.length > 0 && !retryOn.includes('retriable-status-codes'))
      retryOn = retryOn === '' ? 'retriable-status-codes' : `${retryOn},retriable-status-codes`;
    out['retry_on'] = retryOn;
    if (codes.length > 0) out['retriable_status_codes'] = codes;
    else delete out['retriable_status_codes'];
  }
  const perTry = retries.perTryTimeout === undefined ? undefined : envoyDuration(retries.perTryTimeout);
  if (perTry) out['per_try_timeout'] = perTry;
  const backoff = retries.backoff === undefined ? undefined : envoyDuration(retries.backoff);
  if (backoff) out['retry_back_off'] = { base_interval: backoff };
  return out;
}
