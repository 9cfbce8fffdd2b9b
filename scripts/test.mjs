// The test run of `npm test`, after the build: jest, and beside it `npm run check` (type-check,
// lint, formatting, import rules, file sizes) at a low CPU priority. Most suites wait on sockets
// and child processes for part of their time; the check fills that idle CPU instead of running
// alone before the tests, and its low priority keeps it from slowing the suites that measure
// time. Once jest ends, a check still running gets the normal priority back (on a loaded machine
// a niced check would otherwise crawl); where the system refuses that, it is run again at the
// normal priority. Jest's output streams as it comes; the check's is printed whole once both have
// ended, and the run fails if either fails.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

const CHECK_NICENESS = 15;

function start(command, args, { capture, niceness }) {
  // Its own process group when captured (the check): it can then be stopped with its steps.
  const child = spawn(command, args, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit', detached: capture });
  // Before the check starts its steps: they inherit the niceness.
  if (niceness !== undefined && child.pid !== undefined) setPriority(child.pid, niceness);
  let output = '';
  if (capture) {
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
  }
  const done = new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: 1, output: `${output}${String(error)}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
  let finished = false;
  void done.then(() => (finished = true));
  return { child, done, finished: () => finished };
}

/** The process and every process below it, from /proc. */
function processTree(root) {
  const parents = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone since the listing.
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  return tree;
}

function restorePriority(root) {
  try {
    for (const pid of processTree(root)) setPriority(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const CHECK = [process.execPath, ['scripts/check.mjs']];
const JEST = [
  process.execPath,
  ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', 'node_modules/jest/bin/jest.js', ...process.argv.slice(2)],
];

let check = start(...CHECK, { capture: true, niceness: CHECK_NICENESS });
const jest = await start(...JEST, { capture: false }).done;
if (!check.finished() && !restorePriority(check.child.pid)) {
  process.kill(-check.child.pid, 'SIGTERM');
  await check.done;
  check = start(...CHECK, { capture: true });
}
const checked = await check.done;
process.stdout.write(`\n> npm run check (beside the tests)\n${checked.output}`);
process.stdout.write(checked.code === 0 ? '✔ check passed\n' : `✘ check failed (exit ${checked.code})\n`);
if (jest.code !== 0) process.stdout.write(`✘ jest failed (exit ${jest.code})\n`);
process.exit(checked.code !== 0 || jest.code !== 0 ? 1 : 0);
