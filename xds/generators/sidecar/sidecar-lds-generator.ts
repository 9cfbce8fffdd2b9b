import type { Generator } from '../../generator.js';
import { LISTENER_TYPE } from '../../envoy/type-urls.js';
import type { PushContext } from '../push-context.js';
import { buildSidecarListeners, VIRTUAL_INBOUND, type BuildSidecarListenersOptions } from './sidecar-listeners.js';

/**
 * LDS for sidecars: every listener each full push. Outbound listeners depend only on the push
 * context (their encoded bytes are shared by every sidecar); `virtualInbound` is the proxy's own.
 */
export function newSidecarLdsGenerator(options: BuildSidecarListenersOptions = {}): Generator<PushContext> {
  return {
    typeUrl: LISTENER_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      return {
        resources: buildSidecarListeners(proxy, push, options).map((listener) => ({
          name: listener.name,
          resource: listener,
          ...(listener.name === VIRTUAL_INBOUND ? {} : { cacheKey: listener.name }),
        })),
      };
    },
  };
}
