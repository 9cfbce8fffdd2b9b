import { compiling, ConfigRejection } from './config-rejection.js';
import type { RequestContext, TcpDecision, UpstreamChooser } from './decision-types.js';
import { NETWORK_EXT_AUTHZ_TYPE, NETWORK_RBAC_FILTER, NETWORK_RBAC_TYPE, TCP_PROXY_TYPE, type TypedConfig } from './envoy-types.js';
import type { NetworkExtAuthzConfig } from './ext-authz-config.js';
import { compileExtAuthzNetworkFilter } from './ext-authz-filter.js';
import type { ExtAuthzVerdict } from './ext-authz-types.js';
import type { DynamicMetadata } from './facts.js';
import { mergeMetadata } from './http-filter-chain.js';
import { compileRbacFilter, type RbacFilterConfig, type RbacVerdict } from './rbac.js';

type NetworkStage = { kind: 'rbac'; run: ReturnType<typeof compileRbacFilter> } | { kind: 'ext_authz'; run: ReturnType<typeof compileExtAuthzNetworkFilter> };

/**
 * A TCP chain: network RBAC and ext_authz filters in their order (each seeing the dynamic metadata
 * the ones before wrote), then `tcp_proxy` to a single cluster, last.
 */
export function compileTcpChain(
  where: string,
  filters: readonly TypedConfig[],
  upstreams: UpstreamChooser,
  terminatesTls: boolean,
): (context: RequestContext) => Promise<TcpDecision> {
  const stages: NetworkStage[] = [];
  let cluster: string | undefined;
  filters.forEach((filter, index) => {
    const field = `filters[${index}] (${filter.name})`;
    const type = filter.typed_config?.['@type'];
    if (type === NETWORK_RBAC_TYPE)
      stages.push({ kind: 'rbac', run: compiling(where, field, () => compileRbacFilter(filter.typed_config as RbacFilterConfig)) });
    else if (type === NETWORK_EXT_AUTHZ_TYPE)
      stages.push({ kind: 'ext_authz', run: compiling(where, field, () => compileExtAuthzNetworkFilter(filter.typed_config as NetworkExtAuthzConfig)) });
    else if (type === TCP_PROXY_TYPE) {
      if (index !== filters.length - 1) throw new ConfigRejection(where, field, 'tcp_proxy must be the last filter');
      const value = (filter.typed_config as { cluster?: string }).cluster;
      if (!value) throw new ConfigRejection(where, `${field}.cluster`, 'only a single cluster is supported');
      cluster = value;
    } else throw new ConfigRejection(where, field, `filter type ${type ?? '(none)'} is not supported`);
  });
  const target = cluster;
  if (target === undefined) throw new ConfigRejection(where, 'filters', 'needs tcp_proxy or http_connection_manager last');
  const hasExtAuthz = stages.some((stage) => stage.kind === 'ext_authz');
  return async (context) => {
    const rbac: RbacVerdict[] = [];
    const extAuthz: ExtAuthzVerdict[] = [];
    const reached = (): { rbac: RbacVerdict[]; extAuthz?: ExtAuthzVerdict[] } => ({ rbac, ...(hasExtAuthz ? { extAuthz } : {}) });
    let metadata: DynamicMetadata = {};
    for (const stage of stages) {
      if (stage.kind === 'rbac') {
        const verdict = stage.run({ connection: context.connection, metadata });
        rbac.push(verdict);
        if (verdict.dynamicMetadata) metadata = mergeMetadata(metadata, NETWORK_RBAC_FILTER, verdict.dynamicMetadata);
        if (!verdict.allowed) return { kind: 'reset', by: 'rbac', ...reached() };
        continue;
      }
      const check = { connection: context.connection, ...(context.localUriSan ? { localUriSan: context.localUriSan } : {}), terminatesTls };
      const step = await stage.run({ check, metadata, ...(context.extAuthz ? { transport: context.extAuthz } : {}) });
      extAuthz.push(step.verdict);
      if (!step.allowed) return { kind: 'reset', by: 'ext_authz', ...reached() };
    }
    return { kind: 'forward', upstream: upstreams(target, context.pick), ...reached() };
  };
}
