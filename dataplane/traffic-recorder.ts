import type { ConfigSnapshot, ConfigState } from './config-state.js';
import type { ConnectionContext } from './connection-context.js';
import { policyReadable, type HttpDecision, type HttpRequestFacts, type PolicyReadable } from './decisions/index.js';
import { newClaimsCache, recordedRequestOf } from './recorded-request-of.js';
import { newTrafficRecord, type TrafficRecordLimits, type TrafficRecordView } from './traffic-record.js';

/** The data plane's side of the traffic record: what each decided request leaves in it. */
export interface TrafficRecorder {
  record(context: ConnectionContext, request: HttpRequestFacts, decision: HttpDecision): void;
  view(): TrafficRecordView;
}

export function newTrafficRecorder(state: ConfigState, limits: TrafficRecordLimits): TrafficRecorder {
  const record = newTrafficRecord(limits);
  const claimsOf = newClaimsCache();
  // What the policies read changes only with the config: worked out once per snapshot.
  let readable: { snapshot: ConfigSnapshot; names: PolicyReadable } | undefined;
  const readableNow = (): PolicyReadable => {
    const snapshot = state.current();
    if (readable?.snapshot !== snapshot) readable = { snapshot, names: policyReadable(snapshot.resources) };
    return readable.names;
  };
  return {
    record(context, request, decision) {
      if (!record.sampled()) return;
      record.add(
        recordedRequestOf({
          listener: context.listener,
          direction: context.direction,
          connection: context.facts,
          request,
          decision,
          readable: readableNow(),
          claimsOf,
        }),
      );
    },
    view: () => record.view(),
  };
}
