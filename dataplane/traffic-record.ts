import type { RecordedRequest, RecordedSightings } from './decisions/index.js';

/** How much a traffic record keeps: distinct requests, bytes, age, and the share of requests looked at. */
export interface TrafficRecordLimits {
  /** Distinct requests kept; 0 turns the record off. */
  readonly maxEntries: number;
  /** An estimate of the memory the kept requests take, in bytes. */
  readonly maxBytes: number;
  /** A request not seen again for this long is dropped. */
  readonly maxAgeMs: number;
  /** The share of requests recorded, from 0 to 1. */
  readonly sampling: number;
}

export const DEFAULT_TRAFFIC_RECORD_LIMITS: TrafficRecordLimits = { maxEntries: 2000, maxBytes: 2 * 1024 * 1024, maxAgeMs: 3_600_000, sampling: 1 };

/** One distinct request with how often and when it was seen. */
export type TrafficRecordEntry = RecordedSightings;

/** The record as the admin API serves it (`/recent_requests`). */
export interface TrafficRecordView {
  readonly limits: TrafficRecordLimits;
  /** Requests recorded since start (after sampling), and how many distinct ones were dropped for room or age. */
  readonly recorded: number;
  readonly dropped: number;
  readonly bytes: number;
  readonly entries: readonly TrafficRecordEntry[];
}

export interface TrafficRecord {
  /** Whether to record the next request: the record is on and the dice say so. */
  sampled(): boolean;
  /** Records one request; `at` is when it arrived. */
  add(request: RecordedRequest, at?: Date): void;
  view(now?: Date): TrafficRecordView;
}

/** A kept request as its text alone (parsed back when the record is read): half the memory of its objects. */
interface Kept {
  readonly bytes: number;
  count: number;
  firstSeen: number;
  lastSeen: number;
}

/** A fixed per-entry cost over its text: the map slot, the entry and its numbers. */
const ENTRY_OVERHEAD_BYTES = 120;

/**
 * The data plane's record of recent traffic: distinct requests (the same facts and verdict count
 * as one, with a count and first and last sighting), least recently seen out first when the
 * count or the byte estimate is reached, and dropped once older than the age limit.
 */
export function newTrafficRecord(limits: TrafficRecordLimits, random: () => number = Math.random): TrafficRecord {
  // Insertion order is recency order: a sighting moves its entry to the end.
  const kept = new Map<string, Kept>();
  let bytes = 0;
  let recorded = 0;
  let dropped = 0;
  const drop = (key: string, entry: Kept): void => {
    kept.delete(key);
    bytes -= entry.bytes;
    dropped++;
  };
  const expire = (now: number): void => {
    for (const [key, entry] of kept) {
      if (now - entry.lastSeen <= limits.maxAgeMs) break;
      drop(key, entry);
    }
  };
  return {
    sampled: () => limits.maxEntries > 0 && (limits.sampling >= 1 || random() < limits.sampling),
    add(request, at = new Date()) {
      if (limits.maxEntries <= 0) return;
      recorded++;
      const now = at.getTime();
      const key = JSON.stringify(request);
      const seen = kept.get(key);
      if (seen) {
        kept.delete(key);
        seen.count++;
        seen.lastSeen = now;
        kept.set(key, seen);
      } else {
        // Two bytes a character: a text with any non-Latin-1 character is stored so.
        const entry: Kept = { bytes: key.length * 2 + ENTRY_OVERHEAD_BYTES, count: 1, firstSeen: now, lastSeen: now };
        kept.set(key, entry);
        bytes += entry.bytes;
        for (const [oldKey, old] of kept) {
          if (kept.size <= limits.maxEntries && bytes <= limits.maxBytes) break;
          drop(oldKey, old);
        }
      }
      expire(now);
    },
    view(now = new Date()) {
      expire(now.getTime());
      const entries = [...kept].reverse().map(([key, entry]) => ({
        ...(JSON.parse(key) as RecordedRequest),
        count: entry.count,
        firstSeen: new Date(entry.firstSeen).toISOString(),
        lastSeen: new Date(entry.lastSeen).toISOString(),
      }));
      return { limits, recorded, dropped, bytes, entries };
    },
  };
}
