/**
 * Test support: how a test authorization server answers, and what it records. Shared by the
 * HTTP authorizer (fastify) and the gRPC one (grpc-js), which each speak it in their protocol.
 */

/** What the server decides for one check. */
export type AuthorizerAnswer =
  | {
      readonly kind: 'allow';
      /** Headers for the upstream request (HTTP: answer headers; gRPC: `ok_response.headers`, overwriting). */
      readonly upstreamHeaders?: Readonly<Record<string, string>>;
      /** Request headers to drop (HTTP: `x-envoy-auth-headers-to-remove`; gRPC: `headers_to_remove`). */
      readonly removeHeaders?: readonly string[];
      /** Headers for the client's response (HTTP: answer headers; gRPC: `response_headers_to_add`). */
      readonly clientHeaders?: Readonly<Record<string, string>>;
    }
  | {
      readonly kind: 'deny';
      /** HTTP: the answer's status; gRPC: `denied_response.status` (unset when absent). */
      readonly status?: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body?: string;
    }
  /** HTTP: a 5xx with this status (503 by default); gRPC: the call fails with UNAVAILABLE. */
  | { readonly kind: 'error'; readonly status?: number }
  /** The connection is closed without an answer (HTTP: the socket destroyed; gRPC: the server shut down). */
  | { readonly kind: 'hang-up' };

export interface AuthorizerBehaviour {
  readonly answer: AuthorizerAnswer;
  /** Answers this late (a check the proxy gives up on by its timeout). */
  readonly delayMs?: number;
}

export const ALLOW: AuthorizerBehaviour = { answer: { kind: 'allow' } };

/** What every test authorizer offers besides its protocol. */
export interface TestAuthorizer<Check> {
  readonly address: string;
  readonly port: number;
  /** Checks answered or under way since the last `reset`. */
  calls(): number;
  /** The check requests received, oldest first. */
  checks(): readonly Check[];
  /** How the next checks are answered. */
  behave(behaviour: AuthorizerBehaviour): void;
  /** Forgets the checks and answers with ALLOW again. */
  reset(): void;
  close(): Promise<void>;
}

/** The shared record keeping and the delays a test can cancel by closing the server. */
export interface AuthorizerState<Check> {
  behaviour: AuthorizerBehaviour;
  readonly received: Check[];
  /** Waits `delayMs` of the behaviour; resolves false when the server closed meanwhile. */
  delay(delayMs: number | undefined): Promise<boolean>;
  closeDelays(): void;
}

export function newAuthorizerState<Check>(): AuthorizerState<Check> {
  const pending = new Set<{ timer: NodeJS.Timeout; resolve: (answered: boolean) => void }>();
  return {
    behaviour: ALLOW,
    received: [],
    delay(delayMs) {
      if (!delayMs) return Promise.resolve(true);
      return new Promise((resolve) => {
        const entry = {
          timer: setTimeout(() => {
            pending.delete(entry);
            resolve(true);
          }, delayMs),
          resolve,
        };
        pending.add(entry);
      });
    },
    closeDelays() {
      for (const entry of pending) {
        clearTimeout(entry.timer);
        entry.resolve(false);
      }
      pending.clear();
    },
  };
}
