import type { Generator, NamedResource, PushMemo } from '../../generator.js';
import { memoOf } from '../../encoding/index.js';
import { LISTENER_TYPE } from '../../envoy/type-urls.js';
import type { PushContext } from '../../model/push-context.js';
import { serviceVisibilityScope } from '../../model/service-visibility.js';
import { autoAllocationKey, usesAutoAllocation } from '../../model/auto-allocation.js';
import type { Proxy } from '../../proxy.js';
import type { PushFindings } from '../../push/push-findings.js';
import { accessLogOf, withAccessLog } from '../access-log.js';
import { acceptsHttp10, withHttp10 } from '../http10.js';
import { withDelayedClose } from '../delayed-close.js';
import { buildSidecarInboundListener, buildSidecarOutboundListeners, ownPodListener, type BuildSidecarListenersOptions } from './sidecar-listeners.js';

/**
 * LDS for sidecars: every listener each full push. Outbound listeners depend only on the push
 * context and the services the proxy's namespace sees: built once per push (per namespace when
 * some are hidden), and their encoded bytes shared; `virtualInbound` is the proxy's own.
 */
export function newSidecarLdsGenerator(options: BuildSidecarListenersOptions = {}): Generator<PushContext> {
  // Shared by every sidecar, or by those of a namespace when a ServiceEntry's exportTo hides it from some.
  const outbound = (push: PushContext, memo: PushMemo, scope: string, proxy: Proxy, http10: boolean, findings?: PushFindings): readonly NamedResource[] =>
    memo.get(`sidecar-lds/outbound/${scope}`, () =>
      buildSidecarOutboundListeners(push, proxy.configNamespace, usesAutoAllocation(proxy) ? proxy : undefined, findings, options).map((listener) => ({
        name: listener.name,
        resource: withDelayedClose(withHttp10(withAccessLog(listener, accessLogOf(push, memo)), http10), options),
        cacheKey: `${listener.name}@${scope}`,
        sharedKey: `sidecar-lds/${scope}/${listener.name}`,
      })),
    );
  return {
    typeUrl: LISTENER_TYPE,
    generate(proxy, push, request) {
      if (!request.full) return undefined;
      const http10 = acceptsHttp10(proxy, options);
      const inbound = withDelayedClose(
        withHttp10(withAccessLog(buildSidecarInboundListener(proxy, push, options, request.findings), accessLogOf(push, memoOf(request))), http10),
        options,
      );
      // Proxies that use allocated addresses (DNS capture) get them in their TCP chains: shared by family.
      const allocation = autoAllocationKey(proxy);
      const scope = `${serviceVisibilityScope(push, proxy.configNamespace)}${allocation === '' ? '' : `|${allocation}`}${http10 ? '|http10' : ''}`;
      const own = ownPodListener(proxy);
      const shared = outbound(push, memoOf(request), scope, proxy, http10, request.findings).filter((listener) => !own(listener.name));
      return { resources: [...shared, { name: inbound.name, resource: inbound }] };
    },
  };
}
