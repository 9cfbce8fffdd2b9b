import type { EncodedResource } from './generator.js';
import { HeldResources, type ReadonlyHeldResources } from './held-resources.js';
import type { Proxy } from './proxy.js';
import type { Watches, WatchState } from './watch-state.js';

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

/** One response as it was written to the stream. */
export interface SentResponse {
  readonly nonce: string;
  readonly version: string;
  /** The resources written: the proxy now holds each under its name. */
  readonly resources: readonly EncodedResource[];
  /** Names the response removed (delta). */
  readonly removed: readonly string[];
  /** State of the world: the response carried the whole type, so nothing held before it is kept. */
  readonly complete: boolean;
  readonly at: number;
}

/** One ADS stream: who is on the other end and what it was sent, one task at a time. */
export class XdsConnection {
  readonly id: string;
  readonly proxy: Proxy;
  readonly kind: StreamKind;
  readonly peerAddress: string;
  readonly connectedAt: number;
  readonly identities: readonly string[] | undefined;
  private watchStates: Watches = new Map();
  /** Per type URL: what the proxy holds, by resource name. */
  private readonly heldByType = new Map<string, HeldResources>();
  /** Per type URL (state of the world): the subscribed names the held resources were last trimmed to. */
  private readonly prunedFor = new Map<string, readonly string[]>();
  /** Per type URL: when the last response was sent. */
  private readonly lastSentAt = new Map<string, number>();
  /** Types whose last response the proxy NACKed (for the reject gauges). */
  private readonly rejecting = new Set<string>();
  private pushVersion = '';
  private onlyDebugAsked = true;
  private isClosed = false;
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

  /** What the stream watches, by type URL. */
  get watches(): Watches {
    return this.watchStates;
  }

  watch(typeUrl: string): WatchState | undefined {
    return this.watchStates.get(typeUrl);
  }

  /** Takes the watches a request decided. */
  replaceWatches(watches: Watches): void {
    this.watchStates = watches;
  }

  /** What the proxy holds of each type (debug views). */
  get held(): ReadonlyMap<string, ReadonlyHeldResources> {
    return this.heldByType;
  }

  /** What the proxy holds of one type; empty before anything was sent. */
  heldOf(typeUrl: string): ReadonlyHeldResources {
    return this.writableHeld(typeUrl);
  }

  /** Delta: the versions a reopened stream says it holds, in place of anything recorded. */
  recordInitialVersions(typeUrl: string, versions: Readonly<Record<string, string>>): void {
    const held = this.writableHeld(typeUrl);
    held.clear();
    for (const [name, version] of Object.entries(versions)) held.set(name, version, 0);
  }

  /** The proxy gave up these names (delta), or the whole type when `names` is absent. */
  forgetHeld(typeUrl: string, names?: readonly string[]): void {
    if (names === undefined) {
      this.heldByType.delete(typeUrl);
      return;
    }
    const held = this.heldByType.get(typeUrl);
    for (const name of names) held?.delete(name);
  }

  /** Records a response written to the stream: the watch's sent nonce and version, when, and what the proxy now holds. */
  recordSent(typeUrl: string, sent: SentResponse): void {
    const latest = this.watchStates.get(typeUrl);
    if (latest) this.watchStates = new Map(this.watchStates).set(typeUrl, { ...latest, nonceSent: sent.nonce, versionSent: sent.version });
    this.lastSentAt.set(typeUrl, sent.at);
    const held = this.writableHeld(typeUrl);
    if (this.kind === 'sotw') {
      if (sent.complete) held.clear();
      else if (latest && !latest.wildcard) this.pruneToSubscription(typeUrl, latest.names, held);
    }
    for (const name of sent.removed) held.delete(name);
    held.sent(sent.resources, sent.at);
  }

  /** When the type's last response was sent. */
  sentAt(typeUrl: string): number | undefined {
    return this.lastSentAt.get(typeUrl);
  }

  /** The proxy NACKed the type's last response; false when it already was rejecting it. */
  markRejecting(typeUrl: string): boolean {
    if (this.rejecting.has(typeUrl)) return false;
    this.rejecting.add(typeUrl);
    return true;
  }

  /** The proxy accepted the type again; false when it was not rejecting it. */
  clearRejecting(typeUrl: string): boolean {
    return this.rejecting.delete(typeUrl);
  }

  /** The push version of the last push or response. */
  get lastPushVersion(): string {
    return this.pushVersion;
  }

  recordPushVersion(version: string): void {
    this.pushVersion = version;
  }

  /** Only debug types asked so far (a tool, or an agent's debug port): not a proxy in the sync views. */
  get debugOnly(): boolean {
    return this.onlyDebugAsked;
  }

  /** The stream asked for config: it is a proxy. */
  markConfigRequested(): void {
    this.onlyDebugAsked = false;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Marks the stream closed and returns the types it was rejecting (now forgotten); undefined when it was closed already. */
  close(): readonly string[] | undefined {
    if (this.isClosed) return undefined;
    this.isClosed = true;
    const rejecting = [...this.rejecting];
    this.rejecting.clear();
    return rejecting;
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
    if (this.isClosed) return;
    this.abortFn(code, details);
  }

  private writableHeld(typeUrl: string): HeldResources {
    let held = this.heldByType.get(typeUrl);
    if (!held) this.heldByType.set(typeUrl, (held = new HeldResources()));
    return held;
  }

  /** Once per subscription: an ACK keeps the watch's names array, a change makes a new one. */
  private pruneToSubscription(typeUrl: string, names: readonly string[], held: HeldResources): void {
    if (this.prunedFor.get(typeUrl) === names) return;
    if (!held.empty) {
      const watched = new Set(names);
      held.retain((name) => watched.has(name));
    }
    this.prunedFor.set(typeUrl, names);
  }
}
