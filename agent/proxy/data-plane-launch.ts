import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MeshError, parseDuration } from '../../runtime/index.js';
import type { DataPlaneCommand } from './data-plane-process.js';

export interface DataPlaneLaunchInput {
  readonly bootstrapPath: string;
  /** `--proxyLogLevel`: a level, optionally followed by `component:level` entries (`warning,misc:error`). */
  readonly proxyLogLevel: string;
  /** `--proxyComponentLogLevel` (deprecated): component levels, preferred over those in `proxyLogLevel`. */
  readonly proxyComponentLogLevel: string;
  /** Worker threads; 0 leaves Envoy's default (one per core). */
  readonly concurrency: number;
  /** Proxy config `drainDuration`: how long Envoy's listener drain lasts. */
  readonly drainDuration: string;
  /** The binary looked for on the path; `envoy` unless a test names another. */
  readonly envoyBinary?: string;
}

/**
 * The embedded data plane's program: `bin/mesh-dataplane.js` of the package this module is part
 * of, found upwards from it (compiled in `dist/agent/proxy/`, or bundled in `dist/bundle/`).
 */
function embeddedProgram(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = join(dir, 'bin', 'mesh-dataplane.js');
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new MeshError('data-plane-program-missing', `bin/mesh-dataplane.js not found above ${fileURLToPath(import.meta.url)}`);
  }
}

/** Whether `binary` runs (it is on the path and answers `--version`). */
function runs(binary: string): Promise<boolean> {
  return new Promise((resolve) => execFile(binary, ['--version'], { timeout: 5_000 }, (error) => resolve(error === null)));
}

function splitLogLevels(input: DataPlaneLaunchInput): { level: string; components: string } {
  const parts = input.proxyLogLevel
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const level = parts.find((part) => !part.includes(':')) ?? 'warning';
  const components = input.proxyComponentLogLevel !== '' ? input.proxyComponentLogLevel : parts.filter((part) => part.includes(':')).join(',');
  return { level, components };
}

/**
 * How the agent starts the data plane. With an `envoy` binary on the path: Envoy on the
 * bootstrap, with the reference agent's flags (drain time and strategy, no hot restart, unknown
 * static fields allowed, log and component levels, concurrency). Without one: the embedded data
 * plane's program on the same bootstrap and level.
 */
export async function dataPlaneLaunch(input: DataPlaneLaunchInput): Promise<DataPlaneCommand> {
  const { level, components } = splitLogLevels(input);
  const envoy = input.envoyBinary ?? 'envoy';
  if (await runs(envoy)) {
    const drainSeconds = Math.max(1, Math.round(parseDuration(input.drainDuration) / 1000));
    return {
      command: envoy,
      args: [
        '-c',
        input.bootstrapPath,
        '--drain-time-s',
        String(drainSeconds),
        '--drain-strategy',
        'immediate',
        '--local-address-ip-version',
        'v4',
        '--file-flush-interval-msec',
        '1000',
        '--disable-hot-restart',
        '--allow-unknown-static-fields',
        '-l',
        level,
        ...(components !== '' ? ['--component-log-level', components] : []),
        ...(input.concurrency > 0 ? ['--concurrency', String(input.concurrency)] : []),
      ],
    };
  }
  return { command: process.execPath, args: [embeddedProgram(), '-c', input.bootstrapPath, '-l', level] };
}
