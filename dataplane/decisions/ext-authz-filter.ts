import { readGrpcAnswer, readHttpAnswer, type ExtAuthzResult } from './ext-authz-answer.js';
import { buildHttpCheckCall, buildHttpCheckRequest, buildNetworkCheckRequest, type CheckConnection, type CheckHttpRequest } from './ext-authz-check-request.js';
import {
  compileExtAuthzHttpSettings,
  compileExtAuthzNetworkSettings,
  type ExtAuthzConfig,
  type ExtAuthzGrpcService,
  type NetworkExtAuthzConfig,
} from './ext-authz-config.js';
import { networkActiveGauge } from './ext-authz-stats.js';
import type { CheckRequestMessage, ExtAuthzFailure, ExtAuthzTransport, ExtAuthzVerdict, HeaderMutation, RequestBodyReader } from './ext-authz-types.js';
import type { DynamicMetadata, HttpRequestFacts } from './facts.js';
import type { HeaderValues } from './header-mutation.js';

export interface ExtAuthzHttpInput {
  readonly request: HttpRequestFacts;
  readonly metadata: DynamicMetadata;
  readonly check: CheckConnection;
  readonly now: Date;
  readonly streamId: number;
  /** Absent (a caller without a network): every check is an error. */
  readonly transport?: ExtAuthzTransport;
  /** Absent: the body is taken as empty. */
  readonly readBody?: RequestBodyReader;
  /** The route's target cluster: the scope of the filter's stats. */
  readonly statCluster?: string;
}

/** The edits an allowing (or failed-open) check makes on the request and on the client's response. */
export interface ExtAuthzEdits {
  readonly requestMutations: readonly HeaderMutation[];
  readonly requestRemovals: readonly string[];
  readonly responseMutations: readonly HeaderMutation[];
}

export type ExtAuthzHttpStep =
  | ({ readonly kind: 'continue'; readonly verdict: ExtAuthzVerdict } & ExtAuthzEdits)
  | { readonly kind: 'respond'; readonly verdict: ExtAuthzVerdict; readonly status: number; readonly body: string; readonly headers: Readonly<HeaderValues> };

const NO_EDITS: ExtAuthzEdits = { requestMutations: [], requestRemovals: [], responseMutations: [] };
const NO_TRANSPORT: ExtAuthzFailure = { kind: 'failure', reason: 'no-transport', detail: 'no transport to call the authorization server' };
const EMPTY_BODY = { bytes: new Uint8Array(0), truncated: false };

async function callGrpc(
  service: ExtAuthzGrpcService,
  transport: ExtAuthzTransport | undefined,
  request: CheckRequestMessage,
  activeGauge?: string,
): Promise<ExtAuthzResult> {
  if (!transport) return readGrpcAnswer(NO_TRANSPORT);
  const call = {
    cluster: service.cluster,
    ...(service.authority ? { authority: service.authority } : {}),
    timeoutMs: service.timeoutMs,
    request,
    ...(activeGauge ? { activeGauge } : {}),
  };
  return readGrpcAnswer(await transport.grpc(call).catch((error: Error): ExtAuthzFailure => ({ kind: 'failure', reason: 'reset', detail: error.message })));
}

/**
 * Compiles an HTTP ext_authz filter into one step of the request: skipped when
 * `filter_enabled_metadata` does not match (disabled); else the body is buffered when asked
 * (413 past `max_request_bytes` unless `allow_partial_message`), the server checked, and its answer
 * applied: allow continues with its edits, deny answers the client as the server said, an error
 * continues under `failure_mode_allow` or answers `status_on_error` with an empty body.
 */
export function compileExtAuthzHttpFilter(config: ExtAuthzConfig): (input: ExtAuthzHttpInput) => Promise<ExtAuthzHttpStep> {
  const settings = compileExtAuthzHttpSettings(config);
  const { service } = settings;
  return async (input) => {
    const stat = input.statCluster !== undefined ? { statCluster: input.statCluster } : {};
    if (!settings.isEnabled(input.metadata)) return { kind: 'continue', verdict: { result: 'disabled', ...stat }, ...NO_EDITS };
    let body: CheckHttpRequest['body'];
    if (settings.body) {
      const buffered = input.readBody ? await input.readBody(settings.body.maxBytes) : EMPTY_BODY;
      if (buffered.truncated && !settings.body.allowPartial)
        return { kind: 'respond', verdict: { result: 'payload-too-large', ...stat }, status: 413, body: 'Payload Too Large', headers: {} };
      body = { settings: settings.body, buffered };
    }
    const http: CheckHttpRequest = { request: input.request, now: input.now, streamId: input.streamId, ...(body ? { body } : {}) };
    const called = { calledCluster: service.cluster, ...stat };
    let result: ExtAuthzResult;
    if (service.kind === 'http') {
      const call = buildHttpCheckCall(service, http);
      const answer = input.transport
        ? await input.transport.http(call).catch((error: Error): ExtAuthzFailure => ({ kind: 'failure', reason: 'reset', detail: error.message }))
        : NO_TRANSPORT;
      result = readHttpAnswer(service, answer);
    } else {
      result = await callGrpc(service, input.transport, buildHttpCheckRequest(input.check, http));
    }
    switch (result.kind) {
      case 'ok':
        return {
          kind: 'continue',
          verdict: { result: 'ok', ...called },
          requestMutations: result.requestMutations,
          requestRemovals: result.requestRemovals,
          responseMutations: result.responseMutations,
        };
      case 'denied':
        return { kind: 'respond', verdict: { result: 'denied', ...called }, status: result.status, body: result.body, headers: result.headers };
      default:
        if (settings.failureModeAllow)
          return { kind: 'continue', verdict: { result: 'error', failureModeAllowed: true, ...called, detail: result.detail }, ...NO_EDITS };
        return { kind: 'respond', verdict: { result: 'error', ...called, detail: result.detail }, status: settings.statusOnError, body: '', headers: {} };
    }
  };
}

export interface ExtAuthzNetworkInput {
  readonly check: CheckConnection;
  readonly metadata: DynamicMetadata;
  readonly transport?: ExtAuthzTransport;
}

/** Whether the connection goes on (allowed, disabled, or failed open) and what the filter did. */
export interface ExtAuthzNetworkStep {
  readonly allowed: boolean;
  readonly verdict: ExtAuthzVerdict;
}

/**
 * Compiles a network ext_authz filter: one check per connection with its source and destination;
 * a denial, or an error without `failure_mode_allow`, closes the connection.
 */
export function compileExtAuthzNetworkFilter(config: NetworkExtAuthzConfig): (input: ExtAuthzNetworkInput) => Promise<ExtAuthzNetworkStep> {
  const settings = compileExtAuthzNetworkSettings(config);
  const { statPrefix, service } = settings;
  return async (input) => {
    if (!settings.isEnabled(input.metadata)) return { allowed: true, verdict: { result: 'disabled', statPrefix } };
    const result = await callGrpc(service, input.transport, buildNetworkCheckRequest(input.check), networkActiveGauge(statPrefix));
    const called = { calledCluster: service.cluster, statPrefix };
    if (result.kind === 'ok') return { allowed: true, verdict: { result: 'ok', ...called } };
    if (result.kind === 'denied') return { allowed: false, verdict: { result: 'denied', ...called } };
    return {
      allowed: settings.failureModeAllow,
      verdict: { result: 'error', ...called, detail: result.detail, ...(settings.failureModeAllow ? { failureModeAllowed: true } : {}) },
    };
  };
}
