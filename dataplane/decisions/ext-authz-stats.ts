import type { ExtAuthzVerdict } from './ext-authz-types.js';

/**
 * Envoy's names for what an ext_authz filter did. The HTTP filter counts in the scope of the
 * route's target cluster, `cluster.<cluster>.ext_authz.{ok,denied,error,failure_mode_allowed,disabled}`
 * (nothing without a routed cluster). The network filter counts under `ext_authz.<stat_prefix>.`,
 * the prefix written as configured (the reference's `tcp.` gives `ext_authz.tcp..total`):
 * `total` per check, then its outcome, `failure_mode_allowed`, and `cx_closed` per closed connection.
 */
export function httpExtAuthzCounters(verdict: ExtAuthzVerdict): string[] {
  if (verdict.statCluster === undefined || verdict.result === 'payload-too-large') return [];
  const scope = `cluster.${verdict.statCluster}.ext_authz.`;
  return [`${scope}${verdict.result}`, ...(verdict.failureModeAllowed ? [`${scope}failure_mode_allowed`] : [])];
}

export function networkExtAuthzCounters(verdict: ExtAuthzVerdict): string[] {
  if (verdict.statPrefix === undefined || verdict.result === 'payload-too-large') return [];
  const scope = `ext_authz.${verdict.statPrefix}.`;
  if (verdict.result === 'disabled') return [`${scope}disabled`];
  const closed = verdict.result === 'denied' || (verdict.result === 'error' && !verdict.failureModeAllowed);
  return [
    `${scope}total`,
    `${scope}${verdict.result}`,
    ...(verdict.failureModeAllowed ? [`${scope}failure_mode_allowed`] : []),
    ...(closed ? [`${scope}cx_closed`] : []),
  ];
}

/** The network filter's gauge of checks in flight. */
export function networkActiveGauge(statPrefix: string): string {
  return `ext_authz.${statPrefix}.active`;
}
