import type { AccessDenial } from './access-rules.js';
import type { Socket } from 'node:net';

/** Failure injection for tests of retry, relist and reconnect paths. */
export interface FaultControls {
  /** Ends every open watch stream abruptly (the socket is destroyed mid-stream). */
  dropWatches(): void;
  /** Forgets the event history: a watch or a paginated list from an older resourceVersion gets 410. */
  compactHistory(): void;
  /** While on, every connection is closed at once, as if the server were down; turning it on also cuts open ones. */
  refuseConnections(on: boolean): void;
  /** Delays every response by `ms` (0 turns it off). */
  delayMs(ms: number): void;
  /** Answers the next `count` requests with a `Status` failure of the given HTTP status code. */
  failNext(count: number, status: number): void;
  /** How many of the failures `failNext` asked for are still to be answered. */
  pendingFailures(): number;
  /**
   * Refuses the matching requests with 403 Forbidden, and answers access reviews of them with
   * `allowed: false`, as RBAC does for a user lacking them; `[]` allows everything again.
   */
  denyAccess(denials: readonly AccessDenial[]): void;
}

/** The state behind the fault controls, read by the HTTP handler. */
export class FaultState {
  refusing = false;
  delay = 0;
  private failures: { remaining: number; status: number } = { remaining: 0, status: 500 };
  readonly sockets = new Set<Socket>();

  failNext(count: number, status: number): void {
    this.failures = { remaining: Math.max(0, Math.floor(count)), status };
  }

  pending(): number {
    return this.failures.remaining;
  }

  /** The status code the next request must fail with, if any (consumes one failure). */
  takeFailure(): number | undefined {
    if (this.failures.remaining <= 0) return undefined;
    this.failures.remaining--;
    return this.failures.status;
  }

  cutAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }
}
