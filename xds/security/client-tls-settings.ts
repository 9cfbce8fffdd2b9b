import type { ClientTlsSettings, DestinationRule, Subset, TrafficPolicy } from '../../crds/index.js';

type TlsOfPort = { readonly tls: ClientTlsSettings | undefined } | undefined;

/** A port-level entry for `port`: it replaces the whole policy for that port, so an entry without `tls` means no TLS settings. */
function portLevelTls(policy: TrafficPolicy | undefined, port: number): TlsOfPort {
  const entry = policy?.portLevelSettings?.find((settings) => settings.port?.number === port);
  return entry ? { tls: entry.tls } : undefined;
}

/**
 * The DestinationRule TLS settings of one port (and subset), merged as the reference does: the
 * rule's port-level entry replaces its top-level policy; a subset's `tls` overrides that; a
 * subset's own port-level entry overrides everything. Settings without a `mode` count as none,
 * so auto mutual TLS decides.
 */
export function clientTlsSettingsFor(rule: DestinationRule | undefined, port: number, subset?: Subset): ClientTlsSettings | undefined {
  const top = rule?.spec.trafficPolicy;
  let tls = (portLevelTls(top, port) ?? { tls: top?.tls }).tls;
  const policy = subset?.trafficPolicy;
  if (policy?.tls) tls = policy.tls;
  const subsetPort = portLevelTls(policy, port);
  if (subsetPort) tls = subsetPort.tls;
  return tls?.mode === undefined ? undefined : tls;
}
