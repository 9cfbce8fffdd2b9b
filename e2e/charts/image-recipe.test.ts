import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import { PROJECT_ROOT } from '../../testing/run-bin.js';
import { processEnvironment } from '../../runtime/index.js';

// No container engine runs here: the Dockerfile is read as text. Every path it copies from the
// build context or the build stage must exist (the build stage's after `npm run build`, which
// `npm test` runs first), the files it does not copy must not be needed, and the programs it puts
// on the PATH must start.
const run = promisify(execFile);
const dockerfile = readFileSync(join(PROJECT_ROOT, 'Dockerfile'), 'utf8');
const dockerignore = readFileSync(join(PROJECT_ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

interface Instruction {
  stage: number;
  keyword: string;
  args: string;
}

/** The instructions, continuation lines joined, with the index of the stage each belongs to. */
function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ').split('\n');
  let stage = -1;
  const out: Instruction[] = [];
  for (const line of joined) {
    const match = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!match || line.trim().startsWith('#')) continue;
    const keyword = match[1] ?? '';
    if (keyword === 'FROM') stage += 1;
    out.push({ stage, keyword, args: (match[2] ?? '').trim() });
  }
  return out;
}

interface Copy {
  stage: number;
  from?: string;
  sources: string[];
  destination: string;
}

function copies(all: Instruction[]): Copy[] {
  return all
    .filter((instruction) => instruction.keyword === 'COPY')
    .map((instruction) => {
      const words = instruction.args.split(/\s+/);
      const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((word) => !word.startsWith('--'));
      return { stage: instruction.stage, ...(from ? { from } : {}), sources: paths.slice(0, -1), destination: paths.at(-1) ?? '' };
    });
}

const all = instructions(dockerfile);
const stages = all.filter((instruction) => instruction.keyword === 'FROM');

/** Whether a context path is left out of the build context by .dockerignore (top-level patterns and `**` folder patterns). */
function ignored(path: string): boolean {
  const clean = path.replace(/\/$/, '');
  return dockerignore.some((pattern) => {
    if (pattern.startsWith('**/')) return clean.split('/').includes(pattern.slice(3));
    return clean === pattern || clean.startsWith(`${pattern}/`);
  });
}

describe('the Dockerfile', () => {
  test('two stages on Node 20 slim: a build stage and the final image', () => {
    expect(dockerfile).toMatch(/ARG NODE_IMAGE=node:20-slim/);
    expect(stages.map((stage) => stage.args)).toEqual(['${NODE_IMAGE} AS build', '${NODE_IMAGE}']);
    const runs = (stage: number) => all.filter((i) => i.stage === stage && i.keyword === 'RUN').map((i) => i.args);
    expect(runs(0)).toEqual(expect.arrayContaining([expect.stringContaining('npm ci'), 'npm run build']));
    expect(runs(1).some((args) => args.includes('npm ci --omit=dev'))).toBe(true);
  });

  test('every path copied from the build context exists and is not ignored', () => {
    const fromContext = copies(all).filter((copy) => copy.from === undefined);
    expect(fromContext.length).toBeGreaterThan(0);
    for (const copy of fromContext) {
      for (const source of copy.sources) {
        expect({ source, exists: existsSync(join(PROJECT_ROOT, source)), ignored: ignored(source) }).toEqual({ source, exists: true, ignored: false });
      }
    }
  });

  test("every path copied from the build stage exists after npm run build (helm after the project's script fetched it)", () => {
    const fromBuild = copies(all).filter((copy) => copy.from === 'build');
    expect(fromBuild.map((copy) => copy.sources).flat()).toEqual(['/src/dist/', '/src/build-info.json', '/src/.tools/bin/helm']);
    expect(
      all.some(
        (instruction) =>
          instruction.stage === 0 && instruction.keyword === 'RUN' && instruction.args.includes('bash scripts/get-helm-kubectl.sh /src/.tools/bin'),
      ),
    ).toBe(true);
    for (const copy of fromBuild) {
      for (const source of copy.sources)
        expect({ source, exists: existsSync(join(PROJECT_ROOT, source.replace(/^\/src\//, ''))) }).toEqual({ source, exists: true });
    }
    expect(existsSync(join(PROJECT_ROOT, 'dist', 'bundle', 'pilot-agent', 'pilot-agent.mjs'))).toBe(true);
    expect(existsSync(join(PROJECT_ROOT, 'dist', 'bundle', 'mesh-dataplane', 'mesh-dataplane.mjs'))).toBe(true);
  });

  test('the build stage copies every folder tsconfig.build.json compiles, so the build sees the same sources', () => {
    const include = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] }).include;
    const excluded = new Set(['bench', 'testing']);
    const copied = new Set(
      copies(all)
        .filter((copy) => copy.stage === 0)
        .flatMap((copy) => copy.sources.map((source) => source.replace(/\/$/, ''))),
    );
    expect(include.filter((folder) => !excluded.has(folder) && !copied.has(folder))).toEqual([]);
  });

  test('a non-root user with UID 1337, the programs on the PATH, pilot-agent as the entrypoint', () => {
    const user = all.filter((i) => i.keyword === 'USER').at(-1)?.args;
    expect(user).toBe('1337:1337');
    expect(dockerfile).toMatch(/useradd --uid 1337/);
    for (const program of ['pilot-discovery', 'pilot-agent', 'meshctl']) {
      expect(dockerfile).toContain(`ln -s /usr/lib/mesh/bin/${program}.js /usr/local/bin/${program}`);
    }
    expect(all.filter((i) => i.keyword === 'ENTRYPOINT').at(-1)?.args).toBe('["pilot-agent"]');
    expect(dockerfile).toContain('command: [pilot-discovery]');
  });

  test.each(['pilot-agent', 'pilot-discovery', 'meshctl'])('the entrypoint %s runs (--help exits 0)', async (program) => {
    const { stdout } = await run(process.execPath, [join(PROJECT_ROOT, 'bin', `${program}.js`), '--help'], {
      timeout: 30_000,
      env: { PATH: processEnvironment()['PATH'] ?? '' },
    });
    expect(stdout).toMatch(/Usage:/);
  });

  test('the sidecar’s first args are pilot-agent commands', async () => {
    for (const command of ['proxy', 'mesh-iptables']) {
      const { stdout } = await run(process.execPath, [join(PROJECT_ROOT, 'bin', 'pilot-agent.js'), command, '--help'], {
        timeout: 30_000,
        env: { PATH: processEnvironment()['PATH'] ?? '' },
      });
      expect(stdout).toMatch(/Usage:/);
    }
  });
});
