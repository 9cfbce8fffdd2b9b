/**
 * Command-line benchmark: how long `meshctl --help`, `meshctl version --short` and
 * `meshctl validate -f deploy/samples/policies` take from spawn to exit, and their peak resident
 * memory, beside a bare `node -e 0` measured in the same run (interleaved, so a machine's drift
 * touches all alike). Prints figures and ratios against their goals, never passes or fails.
 *
 *   npm run bench:cli [-- runs]
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const RUNS = Number(process.argv[2] ?? 20);
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
/** Loaded before the program: writes the process's peak RSS (VmHWM, kB) to fd 3 as it exits. */
const PEAK_RSS = `data:text/javascript,${encodeURIComponent(
  "import { readFileSync, writeSync } from 'node:fs'; process.on('exit', () => { try { writeSync(3, /VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]); } catch {} });",
)}`;

interface Case {
  readonly name: string;
  readonly args: readonly string[];
  readonly goal?: { readonly ratio: number; readonly rssMb?: number };
}

const CASES: readonly Case[] = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'meshctl --help', args: [`${ROOT}/bin/meshctl.js`, '--help'], goal: { ratio: 2, rssMb: 80 } },
  { name: 'meshctl version --short', args: [`${ROOT}/bin/meshctl.js`, 'version', '--short', '--remote=false'] },
  {
    name: 'meshctl validate -f deploy/samples/policies',
    args: [`${ROOT}/bin/meshctl.js`, 'validate', '-f', `${ROOT}/deploy/samples/policies`],
    goal: { ratio: 4, rssMb: 80 },
  },
];

interface Run {
  readonly ms: number;
  readonly peakRssKb: number;
}

function runOnce(args: readonly string[]): Promise<Run> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', PEAK_RSS, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  let peak = '';
  let errors = '';
  child.stdio[3]?.on('data', (chunk: Buffer) => (peak += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('close', (code) => {
      const ms = performance.now() - started;
      // `validate` exits 0 with warnings; anything else means the case measures an error path.
      if (code !== 0) fail(new Error(`${args.join(' ')} exited ${code}: ${errors.trim()}`));
      else done({ ms, peakRssKb: Number(peak) });
    });
  });
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

async function main(): Promise<void> {
  const runs = new Map<string, Run[]>(CASES.map((c) => [c.name, []]));
  // One warm-up of each (the page cache), then rounds that run every case once.
  for (const c of CASES) await runOnce(c.args);
  for (let round = 0; round < RUNS; round++) for (const c of CASES) runs.get(c.name)?.push(await runOnce(c.args));
  const bare = median((runs.get('node -e 0') ?? []).map((run) => run.ms));
  console.log(`command-line benchmark: ${RUNS} rounds, spawn to exit (median) and peak RSS (median), Node ${process.version}`);
  for (const c of CASES) {
    const measured = runs.get(c.name) ?? [];
    const ms = median(measured.map((run) => run.ms));
    const rssMb = median(measured.map((run) => run.peakRssKb)) / 1024;
    const goal = c.goal ? ` (goal ≤ ${c.goal.ratio}×${c.goal.rssMb ? `, ≤ ${c.goal.rssMb} MB` : ''})` : '';
    console.log(
      `  ${c.name.padEnd(45)} ${ms.toFixed(0).padStart(5)} ms  ${(ms / bare).toFixed(2).padStart(5)}× node -e 0  ${rssMb.toFixed(1).padStart(6)} MB${goal}`,
    );
  }
}

await main();
