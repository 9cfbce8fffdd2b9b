import type { Generator, NamedResource } from '../../generator.js';
import { LISTENER_TYPE } from '../../envoy/type-urls.js';
import type { PushContext } from '../../model/push-context.js';
import { buildSidecarInboundListener, buildSidecarOutboundListeners, type BuildSidecarListenersOptions } from './sidecar-listeners.js';

/**
 * LDS for sidecars: every listener each full push. Outbound listeners depend only on the push
 * context: built once per push, and their encoded bytes shared by every sidecar; `virtualInbound`
 * is the proxy's own.
 */
export function newSidecarLdsGenerator(options: BuildSidecarListenersOptions = {}): Generator<PushContext> {
  const outboundByPush = new WeakMap<PushContext, readonly NamedResource[]>();
  const outbound = (push: PushContext): readonly NamedResource[] => {
    let resources = outboundByPush.get(push);
    if (!resources) {
      resources = buildSidecarOutboundListeners(push).map((listener) => ({ name: listener.name, resource: listener, cacheKey: listener.name }));
      outboundByPush.set(push, resources);
    }
    return resources;
  };
  return {
    typeUrl: LISTENER_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      const inbound = buildSidecarInboundListener(proxy, push, options);
      return { resources: [...outbound(push), { name: inbound.name, resource: inbound }] };
    },
  };
}
