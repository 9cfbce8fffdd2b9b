import type { Proxy } from '../proxy.js';
import { HCM_TYPE } from './http-connection-manager.js';
import { editNetworkFilters } from './listener-edits.js';

/** PILOT_HTTP10 for every proxy. */
export interface Http10Options {
  readonly acceptHttp10?: boolean;
}

/** Whether a proxy's connection managers accept HTTP/1.0: the setting, or its own `HTTP10` metadata (`1`, `true`), as the reference decides. */
export function acceptsHttp10(proxy: Proxy, options: Http10Options): boolean {
  const own = proxy.metadata.raw['HTTP10'];
  return options.acceptHttp10 === true || own === '1' || own === 'true';
}

const CONNECTION_MANAGERS: ReadonlySet<string> = new Set([HCM_TYPE]);

/** A listener whose HTTP connection managers accept HTTP/1.0 requests (Envoy answers them 426 otherwise). */
export function withHttp10<L extends object>(listener: L, accept: boolean): L {
  if (!accept) return listener;
  return editNetworkFilters(listener, CONNECTION_MANAGERS, (config) => ({
    ...config,
    http_protocol_options: { ...(config['http_protocol_options'] as object | undefined), accept_http_10: true },
  }));
}
