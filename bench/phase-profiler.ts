import { writeFile, mkdir } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

/**
 * CPU profiles of chosen phases of a benchmark (`--cpu-prof` covers the whole process): each
 * phase is written as `<dir>/<name>.cpuprofile`, readable in Chrome's DevTools. With
 * `allocations`, a sampled profile of every allocation of the phase too, collected or not
 * (`<name>.heapprofile`: what makes the garbage). Without a folder the phases run unprofiled.
 */
export interface PhaseProfiler {
  around<T>(name: string, phase: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function newPhaseProfiler(dir: string | undefined, options: { allocations?: boolean } = {}): Promise<PhaseProfiler> {
  if (!dir) return { around: (_name, phase) => phase(), close: async () => undefined };
  await mkdir(dir, { recursive: true });
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  return {
    async around(name, phase) {
      await session.post('Profiler.start');
      if (options.allocations) {
        await session.post('HeapProfiler.startSampling', {
          samplingInterval: 64 * 1024,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        });
      }
      try {
        return await phase();
      } finally {
        const { profile } = await session.post('Profiler.stop');
        await writeFile(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
        console.log(`  (profile of this phase: ${join(dir, `${name}.cpuprofile`)})`);
        if (options.allocations) {
          const { profile: allocations } = await session.post('HeapProfiler.stopSampling');
          await writeFile(join(dir, `${name}.heapprofile`), JSON.stringify(allocations));
          console.log(`  (allocations of this phase: ${join(dir, `${name}.heapprofile`)})`);
        }
      }
    },
    async close() {
      await session.post('Profiler.disable');
      session.disconnect();
    },
  };
}
