import type { ServerResponse } from 'node:http';
import type { Clock, KubeObject, TimerHandle } from '../runtime/index.js';
import { RevisionCompactedError } from './object-store.js';
import type { StoredEvent } from './object-store.js';
import { storageKey } from './resource-registry.js';
import { apiVersionOf } from './resource-type.js';
import type { ResourceType } from './resource-type.js';
import type { ResourceService, Selectors } from './resource-service.js';
import { gone } from './status-error.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchRequest {
  type: ResourceType;
  version: string;
  /** Absent for a watch across namespaces. */
  namespace?: string;
  selectors: Selectors;
  /** Absent or `0`: start with the current state; otherwise replay history after it. */
  resourceVersion?: number;
  allowBookmarks: boolean;
  sendInitialEvents: boolean;
  timeoutSeconds?: number;
  /** Turns each event object into what the client asked for (a Table row, partial metadata). */
  encode?: (object: KubeObject, type: ResourceType, version: string) => unknown;
}

interface OpenWatch {
  resource: string;
  response: ServerResponse;
  stop: () => void;
}

/**
 * Serves watch streams: newline-delimited JSON events from a resource version (or from the
 * current state), selector transitions as ADDED/DELETED, periodic BOOKMARKs, timeouts, and
 * an ERROR event with 410 Expired when the history no longer reaches back far enough.
 */
export class WatchHub {
  private readonly open = new Set<OpenWatch>();
  private readonly stopCrdListener: () => void;

  constructor(
    private readonly service: ResourceService,
    private readonly clock: Clock,
    private readonly bookmarkIntervalMs: number,
  ) {
    this.stopCrdListener = service.store.subscribe('apiextensions.k8s.io/customresourcedefinitions', (event) => {
      if (event.type !== 'DELETED') return;
      const spec = event.object['spec'] as { group?: string; names?: { plural?: string } } | undefined;
      this.endWatchesOf(`${spec?.group ?? ''}/${spec?.names?.plural ?? ''}`);
    });
  }

  openCount(): number {
    return this.open.size;
  }

  serve(request: WatchRequest, response: ServerResponse): void {
    const { type, version } = request;
    const resource = storageKey(type);
    const encode = request.encode ?? ((o: KubeObject) => this.service.present(o, type, version));
    response.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    response.flushHeaders();
    response.socket?.setNoDelay(true);
    const send = (eventType: WatchEventType, object: unknown): void => {
      if (!response.writableEnded && !response.destroyed) response.write(`${JSON.stringify({ type: eventType, object })}\n`);
    };

    const inScope = (object: KubeObject | undefined): boolean =>
      object !== undefined &&
      (request.namespace === undefined || (object.metadata?.namespace ?? '') === request.namespace) &&
      this.service.matches(request.selectors, object);
    const deliver = (event: StoredEvent): void => {
      const now = inScope(event.object);
      const before = inScope(event.previous);
      if (event.type === 'DELETED') {
        if (before) send('DELETED', encode(event.object, type, version));
      } else if (now && before) {
        send('MODIFIED', encode(event.object, type, version));
      } else if (now) {
        send('ADDED', encode(event.object, type, version));
      } else if (before) {
        send('DELETED', encode(event.object, type, version));
      }
    };

    let backlog: StoredEvent[] = [];
    const fromNow = request.resourceVersion === undefined || request.resourceVersion === 0 || request.sendInitialEvents;
    if (!fromNow) {
      try {
        backlog = this.service.store.eventsAfter(resource, request.resourceVersion as number);
      } catch (err) {
        if (!(err instanceof RevisionCompactedError)) throw err;
        send('ERROR', gone(`too old resource version: ${err.requested} (${err.oldest})`).toStatus());
        response.end();
        return;
      }
    }

    const timers: TimerHandle[] = [];
    const unsubscribe = this.service.store.subscribe(resource, deliver);
    const watch: OpenWatch = {
      resource,
      response,
      stop: () => {
        unsubscribe();
        for (const t of timers) t.cancel();
        this.open.delete(watch);
      },
    };
    this.open.add(watch);
    response.on('close', watch.stop);

    if (fromNow) {
      for (const object of this.service.store.list(resource, request.namespace)) {
        if (inScope(object)) send('ADDED', encode(object, type, version));
      }
      if (request.sendInitialEvents && request.allowBookmarks) {
        send('BOOKMARK', this.bookmark(type, version, { 'k8s.io/initial-events-end': 'true' }));
      }
    } else {
      for (const event of backlog) deliver(event);
    }

    if (request.allowBookmarks && this.bookmarkIntervalMs > 0) {
      const tick = (): void => {
        send('BOOKMARK', this.bookmark(type, version));
        timers.push(this.clock.setTimer(tick, this.bookmarkIntervalMs));
      };
      timers.push(this.clock.setTimer(tick, this.bookmarkIntervalMs));
    }
    if (request.timeoutSeconds !== undefined && request.timeoutSeconds > 0) {
      timers.push(this.clock.setTimer(() => response.end(), request.timeoutSeconds * 1000));
    }
  }

  /** Ends every stream abruptly, as a dropped connection would. */
  dropAll(): void {
    for (const watch of [...this.open]) {
      watch.stop();
      watch.response.socket?.destroy();
      watch.response.destroy();
    }
  }

  /** Ends every stream cleanly (the server is closing). */
  endAll(): void {
    for (const watch of [...this.open]) {
      watch.stop();
      watch.response.end();
    }
    this.stopCrdListener();
  }

  private endWatchesOf(resource: string): void {
    for (const watch of [...this.open]) {
      if (watch.resource !== resource) continue;
      watch.stop();
      watch.response.end();
    }
  }

  private bookmark(type: ResourceType, version: string, annotations?: Record<string, string>): KubeObject {
    return {
      kind: type.kind,
      apiVersion: apiVersionOf(type.group, version),
      metadata: {
        resourceVersion: String(this.service.store.currentRevision()),
        ...(annotations ? { annotations } : {}),
      },
    };
  }
}
