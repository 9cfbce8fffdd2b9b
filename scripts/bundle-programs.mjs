// Bundles the programs into one module each (plus a chunk for each part only some runs load):
// Node then loads a few files instead of up to fourteen hundred, most of a program's start. The
// agent runs beside every proxy and starts its embedded data plane; the daemon starts once per
// replica and in every end-to-end test; meshctl starts for each command. Runs after the
// transpile, on its output.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { build } from 'esbuild';

const PROGRAMS = [
  // Only the daemon and meshctl talk to Kubernetes; its client is large and never loaded by these two.
  { name: 'pilot-agent', extension: '.mjs', sourcemap: false, external: ['@kubernetes/client-node'] },
  { name: 'mesh-dataplane', extension: '.mjs', sourcemap: false, external: ['@kubernetes/client-node'] },
  // Their worker threads start from a file beside the module that starts them (`./parse-worker.js`).
  { name: 'pilot-discovery', extension: '.js', sourcemap: true, workers: true },
  { name: 'meshctl', extension: '.js', sourcemap: true, workers: true },
];
const WORKERS = { 'parse-worker': 'dist/controllers/sources/parse-worker.js', 'signing-worker': 'dist/ca/authority/signing-worker.js' };

await Promise.all(
  PROGRAMS.map((program) =>
    build({
      entryPoints: { [program.name]: `dist/cli/${program.name}/${program.name}.js`, ...(program.workers ? WORKERS : {}) },
      outdir: `dist/bundle/${program.name}`,
      outExtension: { '.js': program.extension },
      // What is only imported dynamically (a command, the Kubernetes client) goes in its own chunk, loaded if used.
      splitting: true,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // Stack traces and log callers name the TypeScript sources (the transpile's maps are followed).
      sourcemap: program.sourcemap,
      sourcesContent: false,
      // CommonJS dependencies call require(); an ES module has none of its own.
      banner: { js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);" },
      // The HTTP framework is imported dynamically, and a bundled `import()` of a CommonJS package
      // yields only its default export: Node loads it from node_modules, with its named exports.
      external: ['fastify', ...(program.external ?? [])],
      logLevel: 'warning',
    }),
  ),
);

// V8 keeps a module's source in memory as long as the module lives, one byte per character when
// every character is ASCII and two otherwise: one "µ" in a comment or a regular expression doubles
// the agent's largest string (2.8 → 5.6 MB). esbuild leaves comments and regular expressions as
// written, so what is left is escaped (valid in comments, strings, templates, identifiers and
// regular expressions alike).
for (const { name, extension } of PROGRAMS) {
  const dir = `dist/bundle/${name}`;
  for (const file of await readdir(dir)) {
    if (!file.endsWith(extension)) continue;
    const path = `${dir}/${file}`;
    const source = await readFile(path, 'utf8');
    const ascii = source.replace(/[\u0080-\u{10ffff}]/gu, (char) =>
      [...Array(char.length).keys()].map((i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
    );
    if (ascii !== source) await writeFile(path, ascii);
  }
}
