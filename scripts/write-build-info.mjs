// Stamps the build with the git revision, so `version` says which code it runs.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

function git(...args) {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

const gitRevision = git('rev-parse', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no');
const stamp = gitRevision ? { gitRevision, buildStatus: dirty ? 'Modified' : 'Clean' } : { gitRevision: 'unknown', buildStatus: 'unknown' };
writeFileSync(new URL('../build-info.json', import.meta.url), `${JSON.stringify(stamp, null, 2)}\n`);
