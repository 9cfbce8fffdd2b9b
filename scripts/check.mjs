// `npm run check`: type-check every file (and check that every command's flags are read), lint, check the formatting (prettier; `npm run format`
// writes it), the import rules and the file sizes. The steps run as a pool of one per core, the
// longest first (the lint takes about a minute of a core and a half, the type-check half a minute),
// so that the short ones fill the gaps; the output of each step is printed whole, in the order
// below, and the run fails if any step fails.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import packages from './packages.cjs';

const bin = (name) => `node_modules/.bin/${name}`;
const STEPS = [
  [bin('eslint'), '.'],
  // tsc's type check, and on the same program the check that every command's flags are read.
  ['node', '--enable-source-maps', '--import', './testing/ts-register.mjs', 'cli/testing/check-types-and-flags.ts'],
  [bin('prettier'), '--check', '--log-level', 'warn', '**/*.{ts,mjs,cjs}'],
  [bin('depcruise'), ...packages.ALL, '--config', '.dependency-cruiser.cjs'],
  ['node', 'scripts/check-file-sizes.mjs'],
];

function run([command, ...args]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ command: [command, ...args].join(' '), code: 1, output: String(error) }));
    child.on('close', (code) => resolve({ command: [command, ...args].join(' '), code: code ?? 1, output }));
  });
}

const results = new Array(STEPS.length);
let next = 0;
const worker = async () => {
  while (next < STEPS.length) {
    const index = next++;
    results[index] = await run(STEPS[index]);
  }
};
await Promise.all(Array.from({ length: Math.max(1, Math.min(availableParallelism(), STEPS.length)) }, worker));

let failed = false;
for (const result of results) {
  process.stdout.write(`> ${result.command}\n${result.output}`);
  if (result.code !== 0) {
    failed = true;
    process.stdout.write(`✘ exit ${result.code}\n`);
  }
}
if (failed) process.exit(1);
