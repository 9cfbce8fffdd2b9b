import type { Workload } from '../../controllers/index.js';
import type { Proxy } from '../proxy.js';
import type { PushContext } from './push-context.js';

/** Where security filters are asked for: one inbound port of a sidecar, or one server port of a gateway. */
export interface SecurityFilterInput {
  readonly proxy: Proxy;
  readonly push: PushContext;
  /** The sidecar's own workload; for a gateway, its pod when the registry knows it. */
  readonly workload?: Workload;
  /** The namespace whose policies apply (the workload's, else the proxy's config namespace). */
  readonly namespace: string;
  /** The labels policies select on (the workload's, else the proxy's metadata labels). */
  readonly labels: Readonly<Record<string, string>>;
  /** The container port (sidecar inbound) or the Gateway server port. */
  readonly port: number;
  readonly kind: 'sidecar-inbound' | 'gateway';
}

/** A filter as Envoy takes it: a name and a typed config carrying its `@type`. */
export interface TypedFilter {
  readonly name: string;
  /** An HTTP filter a proxy without it may skip (Envoy's `is_optional`). */
  readonly is_optional?: boolean;
  readonly typed_config: { readonly '@type': string } & Readonly<Record<string, unknown>>;
}

/**
 * The policy filters of one port (the security issue builds them): HTTP filters go before the
 * router in this order, network filters before `tcp_proxy`. Without a provider a chain has none.
 */
export interface SecurityFilters {
  /** jwt_authn, then RBAC (CUSTOM, AUDIT, DENY, ALLOW). */
  http(input: SecurityFilterInput): readonly TypedFilter[];
  /** Network RBAC for TCP chains. */
  tcp(input: SecurityFilterInput): readonly TypedFilter[];
}

export const NO_SECURITY_FILTERS: SecurityFilters = { http: () => [], tcp: () => [] };
