import { performance } from 'node:perf_hooks';
import { status } from '@grpc/grpc-js';
import type { Clock, Logger } from '../runtime/index.js';
import { errorMessage } from '../runtime/index.js';
import { shortType } from './envoy/type-urls.js';
import type { XdsCallbacks } from './xds-callbacks.js';
import type { XdsConnection } from './xds-connection.js';

export interface BoundedSendOptions {
  /** PILOT_XDS_SEND_TIMEOUT; 0 waits forever. */
  sendTimeoutMs: number;
  clock: Clock;
  callbacks: XdsCallbacks;
  /** The `ads` scope. */
  log: Logger;
}

/** Writes one response, bounded by PILOT_XDS_SEND_TIMEOUT; false when it was not sent (a stream that timed out is ended). */
export type BoundedSend = (con: XdsConnection, typeUrl: string, message: object) => Promise<boolean>;

export function newBoundedSend(options: BoundedSendOptions): BoundedSend {
  const { sendTimeoutMs, clock, callbacks, log } = options;
  return async (con, typeUrl, message) => {
    if (con.closed) return false;
    const started = performance.now();
    const writing = con.write(message).then(() => 'sent' as const);
    let timer: { cancel(): void } | undefined;
    const outcome =
      sendTimeoutMs > 0
        ? Promise.race([writing, new Promise<'timeout'>((resolve) => (timer = clock.setTimer(() => resolve('timeout'), sendTimeoutMs)))])
        : writing;
    writing.catch(() => undefined);
    try {
      if ((await outcome) === 'timeout') {
        callbacks.onSendTimeout?.(con, typeUrl);
        log.info({ connection: con.id, type: shortType(typeUrl) }, 'timeout writing');
        con.abort(status.DEADLINE_EXCEEDED, 'timeout sending');
        return false;
      }
      return true;
    } catch (error) {
      callbacks.onSendError?.(con, typeUrl, error);
      log.info({ connection: con.id, type: shortType(typeUrl), error: errorMessage(error) }, 'send failed');
      return false;
    } finally {
      timer?.cancel();
      callbacks.onSendDone?.(con, typeUrl, performance.now() - started);
    }
  };
}
