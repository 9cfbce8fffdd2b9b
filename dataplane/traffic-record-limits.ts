import { errorMessage, parseDuration } from '../runtime/index.js';
import { DEFAULT_TRAFFIC_RECORD_LIMITS, type TrafficRecordLimits } from './traffic-record.js';

/**
 * The node metadata that sets a proxy's traffic record (`MESH_META_<KEY>` in the agent's
 * environment, e.g. from `proxyMetadata` in its proxy config).
 */
export const TRAFFIC_RECORD_METADATA = {
  maxEntries: 'TRAFFIC_RECORD_ENTRIES',
  maxBytes: 'TRAFFIC_RECORD_BYTES',
  maxAgeMs: 'TRAFFIC_RECORD_MAX_AGE',
  sampling: 'TRAFFIC_RECORD_SAMPLING',
} as const satisfies Record<keyof TrafficRecordLimits, string>;

/** The limits the node metadata sets, the defaults elsewhere; a bad value is reported by its key and left at the default. */
export function trafficRecordLimitsOf(metadata: Readonly<Record<string, unknown>>, warn: (message: string) => void): TrafficRecordLimits {
  const read = <K extends keyof TrafficRecordLimits>(
    field: K,
    parse: (text: string) => number,
    valid: (value: number) => boolean,
    expected: string,
  ): number => {
    const key = TRAFFIC_RECORD_METADATA[field];
    const raw = metadata[key];
    if (raw === undefined || raw === '') return DEFAULT_TRAFFIC_RECORD_LIMITS[field];
    let value: number;
    try {
      value = parse(String(raw));
    } catch (error) {
      warn(`node metadata ${key}=${String(raw)}: ${errorMessage(error)}; using ${DEFAULT_TRAFFIC_RECORD_LIMITS[field]}`);
      return DEFAULT_TRAFFIC_RECORD_LIMITS[field];
    }
    if (Number.isFinite(value) && valid(value)) return value;
    warn(`node metadata ${key}=${String(raw)}: expected ${expected}; using ${DEFAULT_TRAFFIC_RECORD_LIMITS[field]}`);
    return DEFAULT_TRAFFIC_RECORD_LIMITS[field];
  };
  const integer = (text: string): number => (/^\d+$/.test(text.trim()) ? Number(text) : Number.NaN);
  return {
    maxEntries: read('maxEntries', integer, (value) => value >= 0, 'a whole number of requests, 0 to turn the record off'),
    maxBytes: read('maxBytes', integer, (value) => value > 0, 'a positive whole number of bytes'),
    maxAgeMs: read('maxAgeMs', parseDuration, (value) => value > 0, 'a positive duration such as 30m'),
    sampling: read('sampling', Number, (value) => value >= 0 && value <= 1, 'a share from 0 to 1'),
  };
}
