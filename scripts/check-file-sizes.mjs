// The house's size rules (CONTRIBUTING.md): no product source file over 500 lines, no file of
// cli/ over 200 (each command tree and composition fits on a screen). Tests and test support are
// free. Exits 1, listing the offenders, when a rule is broken.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import packages from './packages.cjs';

const PRODUCT = [...packages.PRODUCT, 'apiserver-double'];
const LIMITS = { cli: 200, default: 500 };

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'testing' && name !== 'testdata') yield* sources(path);
    } else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) yield path;
  }
}

const offenders = [];
for (const top of PRODUCT) {
  let exists = true;
  try {
    statSync(top);
  } catch {
    exists = false;
  }
  if (!exists) continue;
  const limit = LIMITS[top] ?? LIMITS.default;
  for (const file of sources(top)) {
    const lines = readFileSync(file, 'utf8').split('\n').length - 1;
    if (lines > limit) offenders.push(`${file}: ${lines} lines (limit ${limit})`);
  }
}
if (offenders.length > 0) {
  console.error(`files over the size limits:\n  ${offenders.join('\n  ')}`);
  process.exit(1);
}
