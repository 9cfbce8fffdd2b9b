import type { Clock, Logger } from '../runtime/index.js';
import type { ConnectionRegistry } from './connection-registry.js';
import type { DebugRequests } from './debug/debug-requests.js';
import { encodedResourceNames } from './envoy/discovery-request-decoder.js';
import { DEBUG_SYNCZ_TYPE, DEBUG_TYPE, HEALTH_INFORMATION_TYPE, shortType } from './envoy/type-urls.js';
import type { GenerateRequest } from './generator.js';
import { proxyRequestPush } from './push/push-request.js';
import type { PushSnapshot } from './push/push-snapshot.js';
import type { ResponseSender } from './response-sender.js';
import { SharedNameLists } from './shared-name-lists.js';
import { decideDelta, decideSotw, type DeltaRequestView, type RequestDecision, type SotwNamesOnTheWire, type SotwRequestView } from './should-respond.js';
import { subscriptionOf, type Watches } from './watch-state.js';
import type { XdsCallbacks } from './xds-callbacks.js';
import type { XdsConnection } from './xds-connection.js';

export interface RequestHandlerOptions<C> {
  registry: Pick<ConnectionRegistry, 'markRejecting' | 'clearRejecting'>;
  sender: ResponseSender<C>;
  /** The push context in effect, built on first use. */
  currentPush: () => Promise<PushSnapshot<C>>;
  /** Answers the debug types (syncz and `mesh.io/debug`). */
  debug: DebugRequests;
  callbacks: XdsCallbacks;
  clock: Clock;
  /** The `ads` scope. */
  log: Logger;
  /** Health reports (HEALTH_INFORMATION_TYPE); dropped when absent. */
  onHealth?: (con: XdsConnection, report: HealthReport) => void;
}

/** The agent's health report: healthy without `error_detail`, else unhealthy with its message. */
export interface HealthReport {
  readonly healthy: boolean;
  readonly message: string;
}

/** The report a HealthInformation request carries. */
export function healthReportOf(request: SotwRequestView | DeltaRequestView): HealthReport {
  const detail = request.error_detail;
  return detail ? { healthy: false, message: detail.message ?? '' } : { healthy: true, message: '' };
}

/** The requests of a stream: version, nonce, ACK and NACK, and the response a request calls for. */
export interface RequestHandler {
  handleSotwRequest(con: XdsConnection, request: SotwRequestView): Promise<void>;
  handleDeltaRequest(con: XdsConnection, request: DeltaRequestView): Promise<void>;
}

export function newRequestHandler<C>(options: RequestHandlerOptions<C>): RequestHandler {
  const { registry, sender, callbacks, clock, log } = options;
  const sharedNames = new SharedNameLists();

  /** The watch of the type with its names shared, and the key naming them. */
  const withSharedNames = (watches: Watches, typeUrl: string): Watches => {
    const watch = watches.get(typeUrl);
    if (!watch) return watches;
    const shared = sharedNames.share(watch.names);
    if (shared.names === watch.names && shared.key === watch.namesKey) return watches;
    const { namesKey: _stale, ...rest } = watch;
    return new Map(watches).set(typeUrl, { ...rest, names: shared.names, ...(shared.key !== undefined ? { namesKey: shared.key } : {}) });
  };

  /** Records a decision: the new watches, the metrics and logs of NACKs and stale nonces. */
  const apply = (con: XdsConnection, typeUrl: string, decision: RequestDecision, nonce: string): void => {
    con.replaceWatches(withSharedNames(decision.watches, typeUrl));
    const fields = { connection: con.id, type: shortType(typeUrl), nonce };
    callbacks.onStreamRequest?.(con, typeUrl, decision.event);
    switch (decision.event) {
      case 'nack':
        log.warn({ ...fields, error: decision.error }, 'ACK ERROR');
        registry.markRejecting(con, typeUrl);
        return;
      case 'stale':
        log.debug(fields, 'expired nonce');
        return;
      case 'unsubscribe':
        log.debug(fields, 'unsubscribe');
        con.forgetHeld(typeUrl);
        break;
      default:
        log.debug({ ...fields, event: decision.event }, 'request');
    }
    registry.clearRejecting(con, typeUrl);
    if (decision.unsubscribed && decision.unsubscribed.length > 0) con.forgetHeld(typeUrl, decision.unsubscribed);
  };

  const respondToRequest = async (con: XdsConnection, typeUrl: string, decision: RequestDecision): Promise<void> => {
    const push = await options.currentPush();
    const watch = con.watch(typeUrl);
    if (!watch || con.closed) return;
    const request: GenerateRequest = decision.subscribed
      ? { ...proxyRequestPush(clock.now()), names: decision.subscribed, delta: { subscribed: decision.subscribed, unsubscribed: decision.unsubscribed ?? [] } }
      : { ...proxyRequestPush(clock.now()), ...subscriptionOf(watch) };
    await sender.respond(con, typeUrl, push, request, { always: true, forceAll: decision.event === 'force' });
    con.recordPushVersion(push.version);
  };

  const handleHealth = (con: XdsConnection, request: SotwRequestView | DeltaRequestView): void => {
    const report = healthReportOf(request);
    log.debug({ connection: con.id, healthy: report.healthy }, 'health report');
    options.onHealth?.(con, report);
  };

  return {
    async handleSotwRequest(con, request) {
      // Before anything else, as the reference: a report, never a subscription, never answered.
      if (request.type_url === HEALTH_INFORMATION_TYPE) {
        handleHealth(con, request);
        return;
      }
      if (request.type_url === DEBUG_SYNCZ_TYPE) {
        await options.debug.respondSyncz(con, request);
        return;
      }
      if (request.type_url === DEBUG_TYPE) {
        await options.debug.respondDebug(con, request);
        return;
      }
      con.markConfigRequested();
      const decision = decideSotw(con.watches, request, namesOnTheWire(con.watches, request));
      apply(con, request.type_url, decision, request.response_nonce ?? '');
      if (!decision.respond) return;
      await respondToRequest(con, request.type_url, decision);
    },

    async handleDeltaRequest(con, request) {
      if (request.type_url === HEALTH_INFORMATION_TYPE) {
        handleHealth(con, request);
        return;
      }
      con.markConfigRequested();
      const decision = decideDelta(con.watches, request);
      if (decision.event === 'init') {
        // What the proxy already holds from an earlier stream: unchanged resources are not resent.
        con.recordInitialVersions(request.type_url, request.initial_resource_versions ?? {});
      }
      apply(con, request.type_url, decision, request.response_nonce ?? '');
      if (!decision.respond) return;
      await respondToRequest(con, request.type_url, decision);
    },
  };
}

/** The request's names as the decoder kept them encoded, compared with the watch's (see `decideSotw`). */
export function namesOnTheWire(watches: Watches, request: SotwRequestView): SotwNamesOnTheWire {
  const encoded = encodedResourceNames(request);
  if (encoded === undefined) return { repeatsWatch: false };
  const kept = watches.get(request.type_url)?.namesEncoded;
  return { encoded, repeatsWatch: kept !== undefined && kept.equals(encoded) };
}
