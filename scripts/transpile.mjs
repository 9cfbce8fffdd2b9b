// Emits the JavaScript of a TypeScript project (`node scripts/transpile.mjs tsconfig.build.json`)
// into `dist/`, as tsc would, without type-checking: `npm run check` type-checks every file, and
// esbuild writes the same modules in a second where tsc takes half a minute. Every file is a module
// of its own (`isolatedModules`, `verbatimModuleSyntax`), so a file-by-file transpile is exact.
import { build } from 'esbuild';
import ts from 'typescript';

const project = process.argv[2];
if (!project) {
  process.stderr.write('usage: node scripts/transpile.mjs <tsconfig>\n');
  process.exit(2);
}
const config = ts.getParsedCommandLineOfConfigFile(project, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => fail(diagnostic) });
if (!config) fail(`cannot read ${project}`);
if (config.errors.length > 0) fail(ts.flattenDiagnosticMessageText(config.errors[0].messageText, '\n'));

await build({
  entryPoints: config.fileNames.filter((file) => !file.endsWith('.d.ts')),
  outdir: config.options.outDir,
  outbase: config.options.rootDir,
  tsconfig: project,
  format: 'esm',
  platform: 'node',
  target: 'es2022',
  sourcemap: true,
  // As tsc writes them: the maps name the sources, which stay beside the build.
  sourcesContent: false,
  logLevel: 'warning',
});

function fail(reason) {
  process.stderr.write(`transpile: ${typeof reason === 'string' ? reason : ts.flattenDiagnosticMessageText(reason.messageText, '\n')}\n`);
  process.exit(1);
}
