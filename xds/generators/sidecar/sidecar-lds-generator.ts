import type { Generator, NamedResource, PushMemo } from '../../generator.js';
import { memoOf } from '../../encoding/index.js';
import { LISTENER_TYPE } from '../../envoy/type-urls.js';
import type { PushContext } from '../../model/push-context.js';
import { buildSidecarInboundListener, buildSidecarOutboundListeners, type BuildSidecarListenersOptions } from './sidecar-listeners.js';

/**
 * LDS for sidecars: every listener each full push. Outbound listeners depend only on the push
 * context: built once per push, and their encoded bytes shared by every sidecar; `virtualInbound`
 * is the proxy's own.
 */
export function newSidecarLdsGenerator(options: BuildSidecarListenersOptions = {}): Generator<PushContext> {
  const outbound = (push: PushContext, memo: PushMemo): readonly NamedResource[] =>
    memo.get('sidecar-lds/outbound', () =>
      buildSidecarOutboundListeners(push).map((listener) => ({
        name: listener.name,
        resource: listener,
        cacheKey: listener.name,
        sharedKey: `sidecar-lds/${listener.name}`,
      })),
    );
  return {
    typeUrl: LISTENER_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      const inbound = buildSidecarInboundListener(proxy, push, options);
      return { resources: [...outbound(push, memoOf(request)), { name: inbound.name, resource: inbound }] };
    },
  };
}
