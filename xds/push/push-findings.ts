/**
 * What a push found wrong in the config it was built from, as the reference's push status
 * (`PushContext.AddMetric`): each condition holds the keys it was found for (a host, a cluster,
 * a listener, a proxy), and its gauge is how many distinct keys the push holds.
 */
export const PUSH_CONDITIONS = [
  /** Two Services select the same container port of a proxy's workload with different protocols (key: proxy id). */
  'inbound-listener-conflict',
  /** An HTTP service port left out of an outbound listener that a TCP service's chain already holds (key: listener). */
  'outbound-http-over-tcp',
  /** A TCP service port left out of an outbound listener that HTTP services already hold (key: listener). */
  'outbound-tcp-over-http',
  /** A TCP chain whose match another TCP service's chain on the listener already has (key: listener). */
  'outbound-tcp-over-tcp',
  /** A subset name defined again by another DestinationRule of the same host and namespace (key: host). */
  'duplicate-subset',
  /** A cluster name that two ServiceEntries of the same host would both make (key: cluster). */
  'duplicate-cluster',
  /** A cluster that load-balances to no endpoint at all (key: cluster). */
  'cluster-without-instances',
  /** A proxy whose workload is selected by a Service but not ready (key: proxy id). */
  'proxy-endpoint-not-ready',
  /** A proxy whose id and addresses match no known workload (key: proxy id). */
  'proxy-without-workload',
  /** A Service endpoint that names a pod not known yet (key: host). */
  'endpoint-without-pod',
  /** A virtual host domain already served by another virtual host of the route configuration (key: virtual host). */
  'duplicate-domain',
] as const;
export type PushCondition = (typeof PUSH_CONDITIONS)[number];

/** What generators report into: one per push version, shared by every proxy of it. */
export interface PushFindings {
  add(condition: PushCondition, key: string): void;
}

/** The findings of one push snapshot, and what they count. */
export interface PushFindingsLedger extends PushFindings {
  /** Distinct keys per condition (every condition, 0 included). */
  counts(): ReadonlyMap<PushCondition, number>;
  /**
   * The ledger of the next snapshot: the conditions found in its context replace this one's; the
   * generators' findings (listeners, routes) start again on a full push (a new version) and are
   * kept by an endpoint-only push, which regenerates none of them.
   */
  next(full: boolean, fromContext: Iterable<readonly [PushCondition, string]>): PushFindingsLedger;
}

export function newPushFindingsLedger(
  fromContext: Iterable<readonly [PushCondition, string]>,
  onNewKey: (condition: PushCondition, count: number) => void,
): PushFindingsLedger {
  return ledgerOf(new Map(), fromContext, onNewKey);
}

function ledgerOf(
  generated: Map<PushCondition, Set<string>>,
  fromContext: Iterable<readonly [PushCondition, string]>,
  onNewKey: (condition: PushCondition, count: number) => void,
): PushFindingsLedger {
  const context = new Map<PushCondition, Set<string>>();
  for (const [condition, key] of fromContext) setOf(context, condition).add(key);
  const count = (condition: PushCondition): number => {
    const fromGenerators = generated.get(condition);
    const fromModel = context.get(condition);
    if (!fromGenerators || !fromModel) return (fromGenerators?.size ?? 0) + (fromModel?.size ?? 0);
    let both = fromModel.size;
    for (const key of fromGenerators) if (!fromModel.has(key)) both++;
    return both;
  };
  return {
    add(condition, key) {
      if (context.get(condition)?.has(key)) return;
      const keys = setOf(generated, condition);
      if (keys.has(key)) return;
      keys.add(key);
      onNewKey(condition, count(condition));
    },
    counts: () => new Map(PUSH_CONDITIONS.map((condition) => [condition, count(condition)])),
    next(full, nextContext) {
      const kept = new Map<PushCondition, Set<string>>();
      if (!full) for (const [condition, keys] of generated) kept.set(condition, new Set(keys));
      return ledgerOf(kept, nextContext, onNewKey);
    },
  };
}

function setOf(map: Map<PushCondition, Set<string>>, condition: PushCondition): Set<string> {
  let set = map.get(condition);
  if (!set) map.set(condition, (set = new Set()));
  return set;
}
