/**
 * `npm run check`'s type check and flag check in one TypeScript program: every file type-checks
 * (as `tsc -p tsconfig.json --noEmit` would say), and every flag of every command is read by some
 * code (`flag-reads.ts`), but for the exceptions below, each with its reason. A stale exception
 * (the flag is read now, or gone) fails too. Run with
 * `node --enable-source-maps --import ./testing/ts-register.mjs cli/testing/check-types-and-flags.ts`.
 */
import ts from 'typescript';
import { loadSettings } from '../../runtime/index.js';
import { buildMeshctl } from '../meshctl/meshctl-program.js';
import { buildPilotAgent } from '../pilot-agent/pilot-agent-program.js';
import { buildPilotDiscovery } from '../pilot-discovery/pilot-discovery-program.js';
import { FLAG_EXCEPTIONS } from './flag-exceptions.js';
import { flagUses, productSources, projectProgram, withActionSites } from './flag-reads.js';

/** Where commands' options are read: the CLI and the packages their options are handed to. */
const SCANNED_DIRS = ['cli', 'meshctl', 'runtime', 'meshd', 'agent', 'xds'];

const program = projectProgram();
const diagnostics = ts.getPreEmitDiagnostics(program);
const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (name) => name, getCurrentDirectory: ts.sys.getCurrentDirectory, getNewLine: () => '\n' };
process.stdout.write(ts.formatDiagnostics(diagnostics, host));

const io = { stdout: () => undefined, stderr: () => undefined };
const { programs, sites } = withActionSites(() => [
  buildMeshctl(io, () => loadSettings('meshctl', { HOME: '/nonexistent' })),
  buildPilotDiscovery(io, () => loadSettings('pilot-discovery', {})),
  buildPilotAgent(io, () => loadSettings('pilot-agent', {})),
]);
const uses = flagUses(programs, sites, program, productSources(SCANNED_DIRS));
const excepted = (command: string, flag: string) => FLAG_EXCEPTIONS.find((e) => e.command === command && e.flags.includes(flag));
const problems: string[] = [];
for (const use of uses) {
  const exception = excepted(use.command, use.flag);
  if (!use.read && !exception)
    problems.push(
      `${use.command} ${use.flag}: no code reads this flag's value (give it its effect, or an exception with its reason in cli/testing/flag-exceptions.ts)`,
    );
  if (use.read && exception) problems.push(`${use.command} ${use.flag}: read now; remove its exception from cli/testing/flag-exceptions.ts`);
}
for (const exception of FLAG_EXCEPTIONS) {
  for (const flag of exception.flags) {
    if (!uses.some((use) => use.command === exception.command && use.flag === flag))
      problems.push(`${exception.command} ${flag}: no such flag; remove its exception`);
  }
}
for (const problem of problems) process.stdout.write(`${problem}\n`);
process.stdout.write(`checked ${uses.length} flags of ${new Set(uses.map((use) => use.command)).size} commands; ${FLAG_EXCEPTIONS.length} exceptions\n`);
process.exitCode = diagnostics.length > 0 || problems.length > 0 ? 1 : 0;
