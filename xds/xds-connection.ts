import { HeldResources } from './held-resources.js';
import type { Proxy } from './proxy.js';
import type { Watches } from './watch-state.js';

export type StreamKind = 'sotw' | 'delta';


export interface XdsConnectionOptions {
  id: string;
  proxy: Proxy;
  kind: StreamKind;
  peerAddress: string;
  connectedAt: number;
  /** The authenticated identities; undefined when the stream was not authenticated. */
  identities: readonly string[] | undefined;
  /** Writes one response; resolves when it is handed to the transport. */
  write: (message: object) => Promise<void>;
  /** Ends the stream with a gRPC status. */
  abort: (code: number, details: string) => void;
}

/** One ADS stream: who is on the other end and what it was sent, one task at a time. */
export class XdsConnection {
  readonly id: string;
  readonly proxy: Proxy;
  readonly kind: StreamKind;
  readonly peerAddress: string;
  readonly connectedAt: number;
  readonly identities: readonly string[] | undefined;
  watches: Watches = new Map();
  /** Per type URL: what the proxy holds, by resource name. */
  readonly held = new Map<string, HeldResources>();
  /** Per type URL (state of the world): the subscribed names `held` was last trimmed to. */
  readonly prunedFor = new Map<string, readonly string[]>();
  /** Per type URL: when the last response was sent. */
  readonly lastSentAt = new Map<string, number>();
  /** Types whose last response the proxy NACKed (for the reject gauges). */
  readonly rejecting = new Set<string>();
  /** The push version of the last push or response. */
  lastPushVersion = '';
  /** Only debug types asked so far (a tool, or an agent's debug port): not a proxy in the sync views. */
  debugOnly = true;
  closed = false;
  private readonly writeFn: (message: object) => Promise<void>;
  private readonly abortFn: (code: number, details: string) => void;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(options: XdsConnectionOptions) {
    this.id = options.id;
    this.proxy = options.proxy;
    this.kind = options.kind;
    this.peerAddress = options.peerAddress;
    this.connectedAt = options.connectedAt;
    this.identities = options.identities;
    this.writeFn = options.write;
    this.abortFn = options.abort;
  }

  /** Runs `task` after every task queued before it: requests and pushes never interleave on a stream. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  write(message: object): Promise<void> {
    return this.writeFn(message);
  }

  abort(code: number, details: string): void {
    if (this.closed) return;
    this.abortFn(code, details);
  }

  heldOf(typeUrl: string): HeldResources {
    let held = this.held.get(typeUrl);
    if (!held) this.held.set(typeUrl, (held = new HeldResources()));
    return held;
  }
}
