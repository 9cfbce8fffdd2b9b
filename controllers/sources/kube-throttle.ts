import type { Clock, KubeTransport } from '../../runtime/index.js';

/** client-go's client-side rate limit: a token bucket every request to the API server waits on. */
export interface KubeThrottle {
  /** Resolves when the request may go; rejects with the signal's reason if it aborts first. */
  wait(signal?: AbortSignal): Promise<void>;
}

export interface KubeThrottleOptions {
  /** `--orchApiQPS`: tokens per second. */
  qps: number;
  /** `--orchApiBurst`: bucket size. */
  burst: number;
  clock: Clock;
}

/**
 * A token bucket (golang.org/x/time/rate's reservations): the bucket starts full, refills at
 * `qps`, and a request that finds it empty reserves the next token and sleeps until it is due,
 * so waiters are served in order at exactly `qps`.
 */
export function newKubeThrottle(options: KubeThrottleOptions): KubeThrottle {
  const { clock } = options;
  const qps = options.qps > 0 ? options.qps : Number.POSITIVE_INFINITY;
  const burst = Math.max(1, Math.floor(options.burst));
  let tokens = burst;
  let last = clock.now();
  return {
    wait(signal) {
      if (qps === Number.POSITIVE_INFINITY) return Promise.resolve();
      const now = clock.now();
      if (now > last) {
        tokens = Math.min(burst, tokens + ((now - last) / 1000) * qps);
        last = now;
      }
      tokens -= 1;
      if (tokens >= 0) return Promise.resolve();
      return clock.sleep(Math.ceil((-tokens / qps) * 1000), signal);
    },
  };
}

/**
 * The transport of a KubeConfig with every request throttled: the informers' list and watch calls
 * ask the transport for connection options once per request, so waiting there throttles them
 * without touching the list/watch code.
 */
export function throttledTransport(transport: KubeTransport, throttle: KubeThrottle): KubeTransport {
  return {
    getCurrentCluster: () => transport.getCurrentCluster(),
    applyToHTTPSOptions: async (options) => {
      await throttle.wait();
      await transport.applyToHTTPSOptions(options);
    },
  };
}
