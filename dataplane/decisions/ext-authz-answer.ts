import type { ExtAuthzHttpService } from './ext-authz-config.js';
import type { CheckResponseMessage, ExtAuthzGrpcAnswer, ExtAuthzHttpAnswer, HeaderMutation, HeaderValueOptionMessage } from './ext-authz-types.js';
import { applyHeaderMutations, type HeaderValues } from './header-mutation.js';
import { httpStatusCode } from './http-status.js';

/** What an authorization server decided, read from its answer. */
export type ExtAuthzResult =
  | {
      readonly kind: 'ok';
      /** Edits of the request on its way upstream. */
      readonly requestMutations: readonly HeaderMutation[];
      readonly requestRemovals: readonly string[];
      /** Edits of the client's response. */
      readonly responseMutations: readonly HeaderMutation[];
    }
  | { readonly kind: 'denied'; readonly status: number; readonly headers: Readonly<HeaderValues>; readonly body: string }
  | { readonly kind: 'error'; readonly detail: string };

/** The server lists request headers to drop in this header of an allowing answer. */
export const HEADERS_TO_REMOVE_HEADER = 'x-envoy-auth-headers-to-remove';
/** Headers a denial always passes to the client when `allowed_client_headers` is set. */
const ALWAYS_TO_CLIENT = ['www-authenticate', 'location'];
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'content-length']);

/** Pseudo-headers and Host are never removed at a server's request. */
function removable(name: string): boolean {
  return name !== '' && !name.startsWith(':') && name !== 'host';
}

function valuesOf(value: string | readonly string[]): readonly string[] {
  return typeof value === 'string' ? [value] : value;
}

/** The server's headers a predicate picks, one edit per value. */
function picked(
  headers: Readonly<Record<string, string | readonly string[]>>,
  pick: (name: string) => boolean,
  action: HeaderMutation['action'],
): HeaderMutation[] {
  const out: HeaderMutation[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (HOP_BY_HOP.has(name) || !pick(name)) continue;
    // A repeated header is set once with its values joined, as Envoy copies a header entry.
    if (action === 'overwrite') out.push({ name, value: valuesOf(value).join(','), action });
    else for (const one of valuesOf(value)) out.push({ name, value: one, action });
  }
  return out;
}

/**
 * An HTTP server's answer: 200 allows (the `allowed_upstream_headers` it sent are set on the
 * request, `x-envoy-auth-headers-to-remove` names headers to drop, `allowed_client_headers_on_success`
 * go to the client); a 5xx is an error; anything else denies with its status, body and the headers
 * `allowed_client_headers` picks (all but Host when unset; WWW-Authenticate and Location always).
 */
export function readHttpAnswer(service: ExtAuthzHttpService, answer: ExtAuthzHttpAnswer): ExtAuthzResult {
  if (answer.kind === 'failure') return { kind: 'error', detail: `${answer.reason}: ${answer.detail}` };
  if (answer.status >= 500) return { kind: 'error', detail: `the authorization server answered ${answer.status}` };
  const headers = answer.headers;
  if (answer.status === 200) {
    const upstream = service.upstreamHeaders;
    const client = service.clientHeadersOnSuccess;
    const toRemove = headers[HEADERS_TO_REMOVE_HEADER];
    const removals =
      toRemove === undefined
        ? []
        : valuesOf(toRemove)
            .flatMap((list) => list.split(','))
            .map((name) => name.trim().toLowerCase())
            .filter(removable);
    return {
      kind: 'ok',
      requestMutations: upstream ? picked(headers, upstream, 'overwrite') : [],
      requestRemovals: removals,
      responseMutations: client ? picked(headers, client, 'append') : [],
    };
  }
  const allowed = service.clientHeaders;
  const pick = allowed ? (name: string) => allowed(name) || ALWAYS_TO_CLIENT.includes(name) : (name: string) => name !== 'host';
  const denial: HeaderValues = {};
  applyHeaderMutations(denial, picked(headers, pick, 'append'), { joined: false });
  return { kind: 'denied', status: answer.status, headers: denial, body: Buffer.from(answer.body).toString('utf8') };
}

const APPEND_ACTIONS: Readonly<Record<string, HeaderMutation['action']>> = {
  APPEND_IF_EXISTS_OR_ADD: 'append',
  ADD_IF_ABSENT: 'add-if-absent',
  OVERWRITE_IF_EXISTS_OR_ADD: 'overwrite',
  OVERWRITE_IF_EXISTS: 'overwrite-if-exists',
};
const ACTION_BY_NUMBER: readonly HeaderMutation['action'][] = ['append', 'add-if-absent', 'overwrite', 'overwrite-if-exists'];

/**
 * A HeaderValueOption as Envoy reads one from a CheckResponse: the deprecated `append` decides
 * when set (true appends, false overwrites), else `append_action` (appending by default).
 */
function mutationsOf(options: readonly HeaderValueOptionMessage[] | undefined): HeaderMutation[] {
  const out: HeaderMutation[] = [];
  for (const option of options ?? []) {
    const name = option.header?.key?.toLowerCase() ?? '';
    const value = option.header?.value ?? '';
    if (name === '' || (value === '' && option.keep_empty_value !== true)) continue;
    let action: HeaderMutation['action'];
    if (option.append !== undefined && option.append !== null) action = option.append.value === true ? 'append' : 'overwrite';
    else if (typeof option.append_action === 'number') action = ACTION_BY_NUMBER[option.append_action] ?? 'overwrite';
    else action = option.append_action === undefined ? 'append' : (APPEND_ACTIONS[option.append_action] ?? 'overwrite');
    out.push({ name, value, action });
  }
  return out;
}

/** A denied response's HTTP status: its own when it names one (any code Envoy would send), else 403. */
function deniedStatus(code: string | number | undefined): number {
  const known = httpStatusCode(code);
  if (known !== undefined) return known;
  return typeof code === 'number' && code >= 200 && code < 600 ? code : 403;
}

/**
 * A gRPC server's answer: status OK allows with the OK response's edits; any other status denies
 * with the denied response's status (403 unless given), headers and body; a failed call is an error.
 */
export function readGrpcAnswer(answer: ExtAuthzGrpcAnswer): ExtAuthzResult {
  if (answer.kind === 'failure') return { kind: 'error', detail: `${answer.reason}: ${answer.detail}` };
  const response: CheckResponseMessage = answer.response;
  if ((response.status?.code ?? 0) === 0) {
    const ok = response.ok_response;
    return {
      kind: 'ok',
      requestMutations: mutationsOf(ok?.headers),
      requestRemovals: (ok?.headers_to_remove ?? []).map((name) => name.toLowerCase()).filter(removable),
      responseMutations: mutationsOf(ok?.response_headers_to_add),
    };
  }
  const denied = response.denied_response;
  const headers: HeaderValues = {};
  applyHeaderMutations(headers, mutationsOf(denied?.headers), { joined: false });
  return { kind: 'denied', status: deniedStatus(denied?.status?.code ?? undefined), headers, body: denied?.body ?? '' };
}
