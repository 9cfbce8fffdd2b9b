// `npm run check`: type-check every file (and check that every command's flags are read), lint, check the formatting (prettier; `npm run format`
// writes it), the import rules and the file sizes. The type-check and the lint each take most of a
// core for a minute, so they run side by side; the output of each step is printed whole, in
// order, and the run fails if any step fails.
import { spawn } from 'node:child_process';
import packages from './packages.cjs';

const bin = (name) => `node_modules/.bin/${name}`;
const STEPS = [
  [
    // tsc's type check, and on the same program the check that every command's flags are read.
    ['node', '--enable-source-maps', '--import', './testing/ts-register.mjs', 'cli/testing/check-types-and-flags.ts'],
    [bin('eslint'), '.'],
  ],
  [
    [bin('depcruise'), ...packages.ALL, '--config', '.dependency-cruiser.cjs'],
    ['node', 'scripts/check-file-sizes.mjs'],
    [bin('prettier'), '--check', '--log-level', 'warn', '**/*.{ts,mjs,cjs}'],
  ],
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

let failed = false;
for (const group of STEPS) {
  for (const result of await Promise.all(group.map(run))) {
    process.stdout.write(`> ${result.command}\n${result.output}`);
    if (result.code !== 0) {
      failed = true;
      process.stdout.write(`✘ exit ${result.code}\n`);
    }
  }
  if (failed) process.exit(1);
}
