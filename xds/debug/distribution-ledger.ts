import type { Clock } from '../../runtime/index.js';

/** Which generation of each config a push version carried: the answer to "has the proxy got it?". */
export interface DistributionLedger {
  /** Records a push version and the generation of every config (`<Kind>/<namespace>/<name>`) it was built from. */
  record(version: string, generations: ReadonlyMap<string, string>): void;
  /** The generation of `key` in that version: `''` when the version carried no such config, undefined when the version is unknown (never seen, or older than the retention). */
  generationAt(version: string, key: string): string | undefined;
}

export interface DistributionSettings {
  /** PILOT_DISTRIBUTION_HISTORY_RETENTION: versions older than this are forgotten (the newest is always kept). */
  readonly retentionMs: number;
}

export function newDistributionLedger(settings: DistributionSettings, clock: Clock): DistributionLedger {
  const versions = new Map<string, { at: number; generations: ReadonlyMap<string, string> }>();
  return {
    record(version, generations) {
      const now = clock.now();
      versions.set(version, { at: now, generations });
      for (const [old, entry] of versions) {
        // Map order is insertion order: stop at the first version still within the retention.
        if (old === version || now - entry.at <= settings.retentionMs) break;
        versions.delete(old);
      }
    },
    generationAt(version, key) {
      const entry = versions.get(version);
      return entry === undefined ? undefined : (entry.generations.get(key) ?? '');
    },
  };
}
