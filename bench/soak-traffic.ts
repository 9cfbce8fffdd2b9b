/**
 * The soak's steady traffic: an open loop at a constant rate, round-robin over client → server
 * pairs, each request sent to the client's sidecar (HTTP proxy form) and carried to the server's
 * sidecar over mutual TLS. Every outcome is classified against the deny windows known so far.
 */
import { Agent, request } from 'node:http';
import type { DenyWindow } from './soak-churn.js';

export interface TrafficPair {
  readonly from: string;
  readonly to: string;
  /** The client sidecar's outbound address, `http://<pod>:15001`. */
  readonly proxy: string;
}

export interface TrafficCounts {
  sent: number;
  ok: number;
  /** Non-200 answers and errors outside every deny window of their pair: the goal is 0. */
  failuresOutside: number;
  /** 403 inside a deny window of their pair: expected. */
  deniedInside: number;
  /** Anything else that went wrong inside a window (a reset, a 503): reported apart. */
  otherInside: number;
  /** Requests not sent because too many were still in flight (the load generator fell behind). */
  skipped: number;
}

export interface FailureSample {
  readonly at: number;
  readonly pair: string;
  readonly outcome: string;
}

export interface Traffic {
  /** Counts since the start. */
  counts(): TrafficCounts;
  /** The first failures outside windows (at most 50), with when and what. */
  failures(): readonly FailureSample[];
  /** Per deny window: how many of its pair's requests were denied, and when the first and last of them were sent. */
  deniedIn(window: DenyWindow): { count: number; firstAt?: number; lastAt?: number };
  stop(): Promise<void>;
}

export interface TrafficOptions {
  readonly pairs: readonly TrafficPair[];
  readonly ratePerSecond: number;
  /** The windows so far (the churn appends and closes them). */
  readonly windows: readonly DenyWindow[];
  /** After a window's end, how long a denial still counts as expected (the removal reaching the data plane). */
  readonly graceMs: number;
  readonly timeoutMs: number;
  readonly maxInFlight: number;
  readonly now: () => number;
}

const MAX_FAILURE_SAMPLES = 50;

/** One request of a pair: `ok`, or the status and the start of the body, or the error; with `mustContain`, a 200 whose body lacks it is not `ok`. */
export function requestOnce(pair: TrafficPair, agent: Agent, timeoutMs: number, mustContain?: string): Promise<string> {
  const proxy = new URL(pair.proxy);
  const host = `httpbin.${pair.to}:8000`;
  return new Promise((resolve) => {
    const req = request(
      { host: proxy.hostname, port: Number(proxy.port), path: `http://${host}/headers`, headers: { host }, agent, timeout: timeoutMs },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (body.length < (mustContain ? 16_384 : 200)) body += chunk;
        });
        res.on('end', () =>
          resolve(
            res.statusCode === 200 && (!mustContain || body.includes(mustContain))
              ? 'ok'
              : `${res.statusCode} ${mustContain && res.statusCode === 200 ? `without ${mustContain}` : body.trim().slice(0, 80)}`,
          ),
        );
        res.on('error', (error) => resolve(`response error: ${error.message}`));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error) => resolve(`error: ${error.message}`));
    req.end();
  });
}

export function startTraffic(options: TrafficOptions): Traffic {
  const counts: TrafficCounts = { sent: 0, ok: 0, failuresOutside: 0, deniedInside: 0, otherInside: 0, skipped: 0 };
  const failures: FailureSample[] = [];
  const deniedByWindow = new Map<DenyWindow, { count: number; firstAt?: number; lastAt?: number }>();
  const agents = options.pairs.map(() => new Agent({ keepAlive: true, maxSockets: 16 }));
  const inFlight = new Set<Promise<void>>();
  const intervalMs = 1000 / options.ratePerSecond;
  const started = options.now();
  let next = 0;
  let stopped = false;

  const windowOf = (pair: TrafficPair, sentAt: number): DenyWindow | undefined =>
    options.windows.find(
      (window) =>
        window.fromNamespace === pair.from &&
        window.toNamespace === pair.to &&
        sentAt >= window.startAt &&
        (window.endAt === undefined || sentAt <= window.endAt + options.graceMs),
    );

  const fire = (index: number): void => {
    const pairIndex = index % options.pairs.length;
    const pair = options.pairs[pairIndex] as TrafficPair;
    if (inFlight.size >= options.maxInFlight) {
      counts.skipped++;
      return;
    }
    counts.sent++;
    const sentAt = options.now();
    const done = requestOnce(pair, agents[pairIndex] as Agent, options.timeoutMs).then((outcome) => {
      inFlight.delete(done);
      if (outcome === 'ok') return void counts.ok++;
      const window = windowOf(pair, sentAt);
      if (window && outcome.startsWith('403')) {
        counts.deniedInside++;
        const denied = deniedByWindow.get(window) ?? { count: 0 };
        deniedByWindow.set(window, {
          count: denied.count + 1,
          firstAt: Math.min(denied.firstAt ?? sentAt, sentAt),
          lastAt: Math.max(denied.lastAt ?? sentAt, sentAt),
        });
      } else if (window) counts.otherInside++;
      else {
        counts.failuresOutside++;
        if (failures.length < MAX_FAILURE_SAMPLES) failures.push({ at: sentAt, pair: `${pair.from} → ${pair.to}`, outcome });
      }
    });
    inFlight.add(done);
  };

  // Paced by the clock, not by the timer's count: a late tick sends what was due.
  const tick = (): void => {
    if (stopped) return;
    const due = Math.floor((options.now() - started) / intervalMs);
    while (next <= due) fire(next++);
    timer = setTimeout(tick, Math.max(1, started + next * intervalMs - options.now()));
  };
  let timer = setTimeout(tick, 0);

  return {
    counts: () => ({ ...counts }),
    failures: () => failures,
    deniedIn: (window) => deniedByWindow.get(window) ?? { count: 0 },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(inFlight);
      for (const agent of agents) agent.destroy();
    },
  };
}
