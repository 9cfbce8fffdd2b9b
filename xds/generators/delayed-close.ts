import { HCM_TYPE } from './http-connection-manager.js';
import { editNetworkFilters } from './listener-edits.js';

/** PILOT_HTTP_DELAYED_CLOSE_TIMEOUT for every proxy. */
export interface DelayedCloseOptions {
  readonly delayedCloseTimeoutMs?: number;
}

/** Envoy's own default: a connection manager left without the field waits this long already. */
const ENVOY_DEFAULT_MS = 1000;
const CONNECTION_MANAGERS: ReadonlySet<string> = new Set([HCM_TYPE]);

/**
 * A listener whose HTTP connection managers wait `delayedCloseTimeoutMs` for the downstream peer to
 * close after they closed first (0 closes at once); itself when that is Envoy's default.
 */
export function withDelayedClose<L extends object>(listener: L, options: DelayedCloseOptions): L {
  const ms = options.delayedCloseTimeoutMs;
  if (ms === undefined || ms === ENVOY_DEFAULT_MS) return listener;
  const duration = ms % 1000 === 0 ? { seconds: ms / 1000 } : { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
  return editNetworkFilters(listener, CONNECTION_MANAGERS, (config) => ({ ...config, delayed_close_timeout: duration }));
}
