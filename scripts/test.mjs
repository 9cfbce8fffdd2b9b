// The test run of `npm test`, after the build: jest, and beside it `npm run check` (type-check,
// lint, formatting, import rules, file sizes) at a low CPU priority. Most suites wait on sockets
// and child processes for part of their time; the check fills that idle CPU instead of running
// alone before the tests, and its low priority keeps it from slowing the suites that measure
// time. Jest's output streams as it comes; the check's is printed whole once both have ended, and
// the run fails if either fails.
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';

const CHECK_NICENESS = 15;

function run(command, args, { capture, niceness }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    // Before the check starts its steps: they inherit the niceness.
    if (niceness !== undefined && child.pid !== undefined) setPriority(child.pid, niceness);
    let output = '';
    if (capture) {
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
    }
    child.on('error', (error) => resolve({ code: 1, output: `${output}${String(error)}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const [check, jest] = await Promise.all([
  run(process.execPath, ['scripts/check.mjs'], { capture: true, niceness: CHECK_NICENESS }),
  run(process.execPath, ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', 'node_modules/jest/bin/jest.js', ...process.argv.slice(2)], {
    capture: false,
  }),
]);
process.stdout.write(`\n> npm run check (beside the tests)\n${check.output}`);
process.stdout.write(check.code === 0 ? '✔ check passed\n' : `✘ check failed (exit ${check.code})\n`);
if (jest.code !== 0) process.stdout.write(`✘ jest failed (exit ${jest.code})\n`);
process.exit(check.code !== 0 || jest.code !== 0 ? 1 : 0);
