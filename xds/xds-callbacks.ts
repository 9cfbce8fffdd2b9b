import type { PushCondition } from './push/push-findings.js';
import type { PushRequest } from './push/push-request.js';
import type { RequestEvent } from './should-respond.js';
import type { XdsConnection } from './xds-connection.js';

/**
 * What happens on the streams and in the push pipeline, as go-control-plane's `Callbacks`: every
 * function is optional and none may change the outcome. The metrics are one such observer
 * (`buildMetricsCallbacks`). Durations are in milliseconds.
 */
export interface XdsCallbacks {
  /** A stream is registered: its first request named the proxy. */
  onStreamOpen?(con: XdsConnection): void;
  onStreamClosed?(con: XdsConnection): void;
  /** A request of a watched type was decided (ACK, NACK, stale nonce, new subscription…). */
  onStreamRequest?(con: XdsConnection, typeUrl: string, event: RequestEvent): void;
  /** A response was written: the bytes of the resources sent, the time from generating to written. */
  onStreamResponse?(con: XdsConnection, typeUrl: string, response: { readonly bytes: number; readonly durationMs: number }): void;
  /** The stream started (+1) or stopped (-1) rejecting the type's config. */
  onRejectingChange?(typeUrl: string, delta: 1 | -1): void;
  /** The model reported a change (before debouncing): the reference's inbound config update. */
  onConfigUpdate?(request: PushRequest): void;
  /** A debounced push begins, before its context is built. */
  onPush?(request: PushRequest): void;
  /** A push context could not be built. */
  onPushContextError?(error: unknown): void;
  /** A worker took the connection off the push queue. */
  onPushDequeued?(con: XdsConnection, queuedMs: number): void;
  /** A push reached every watched type of the connection: the time since its trigger. */
  onPushDone?(con: XdsConnection, convergenceMs: number): void;
  /** A write was over PILOT_XDS_SEND_TIMEOUT (the stream is then ended). */
  onSendTimeout?(con: XdsConnection, typeUrl: string): void;
  onSendError?(con: XdsConnection, typeUrl: string, error: unknown): void;
  /** A write settled, whatever its outcome. */
  onSendDone?(con: XdsConnection, typeUrl: string, durationMs: number): void;
  /** A generator threw, or a resource of it could not be encoded. */
  onGeneratorError?(con: XdsConnection, typeUrl: string, error: unknown): void;
  /** How many distinct keys the push in effect holds for a condition (see push/push-findings.ts). */
  onFinding?(condition: PushCondition, count: number): void;
  onCacheRead?(result: 'hit' | 'miss'): void;
  onCacheEvicted?(count: number): void;
  onCacheSize?(entries: number): void;
}
