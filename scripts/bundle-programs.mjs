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

// The source maps name our TypeScript in stack traces and log callers; their mappings into the
// dependencies (zod, re2js, yaml, gRPC, client-node: most of each map) only name the dependencies'
// own files. Node reads and keeps each loaded chunk's map at load: dropping those mappings took
// `meshctl validate`'s peak RSS from 81.8 to 74.0 MB (73.4 without maps) and its start by 30 ms.
// A frame in a dependency then names the bundle's chunk and line, as the agent's frames do: each
// run of dropped segments starts with an unmapped one (a column alone), since Node maps a position
// to the closest mapping before it, however many lines back. (Node 20 reads a column-alone segment
// at the very end of the mappings as mapped: a `;` then follows it.)
const VLQ = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const VLQ_DIGITS = new Map([...VLQ].map((char, digit) => [char, digit]));
const decodeVlq = (segment) => {
  const values = [];
  let value = 0;
  let shift = 0;
  for (const char of segment) {
    const digit = VLQ_DIGITS.get(char) ?? 0;
    value += (digit & 31) << shift;
    if (digit & 32) shift += 5;
    else {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return values;
};
const encodeVlq = (number) => {
  let value = number < 0 ? (-number << 1) | 1 : number << 1;
  let text = '';
  do {
    let digit = value & 31;
    value >>>= 5;
    if (value) digit |= 32;
    text += VLQ[digit];
  } while (value);
  return text;
};
/** The map without the segments that point into node_modules (the others re-encoded, relative to the ones kept). */
function withoutDependencyMappings(map) {
  const dependency = map.sources.map((source) => source.includes('node_modules/'));
  const read = { source: 0, line: 0, column: 0, name: 0 };
  const written = { source: 0, line: 0, column: 0, name: 0 };
  let lastWrittenMapped = false;
  let endsUnmapped = false;
  const lines = map.mappings.split(';').map((line) => {
    let column = 0;
    let writtenColumn = 0;
    const kept = [];
    for (const segment of line === '' ? [] : line.split(',')) {
      const [columnDelta = 0, sourceDelta, lineDelta = 0, sourceColumnDelta = 0, nameDelta] = decodeVlq(segment);
      column += columnDelta;
      if (sourceDelta === undefined) continue;
      read.source += sourceDelta;
      read.line += lineDelta;
      read.column += sourceColumnDelta;
      if (nameDelta !== undefined) read.name += nameDelta;
      if (dependency[read.source]) {
        if (lastWrittenMapped) {
          kept.push(encodeVlq(column - writtenColumn));
          writtenColumn = column;
          lastWrittenMapped = false;
          endsUnmapped = true;
        }
        continue;
      }
      let text = encodeVlq(column - writtenColumn) + encodeVlq(read.source - written.source) + encodeVlq(read.line - written.line);
      text += encodeVlq(read.column - written.column);
      if (nameDelta !== undefined) {
        text += encodeVlq(read.name - written.name);
        written.name = read.name;
      }
      writtenColumn = column;
      written.source = read.source;
      written.line = read.line;
      written.column = read.column;
      lastWrittenMapped = true;
      endsUnmapped = false;
      kept.push(text);
    }
    return kept.join(',');
  });
  const mappings = lines.join(';');
  return { ...map, mappings: endsUnmapped && !mappings.endsWith(';') ? `${mappings};` : mappings };
}
for (const { name } of PROGRAMS.filter((program) => program.sourcemap)) {
  const dir = `dist/bundle/${name}`;
  for (const file of await readdir(dir)) {
    if (!file.endsWith('.js.map')) continue;
    const path = `${dir}/${file}`;
    await writeFile(path, JSON.stringify(withoutDependencyMappings(JSON.parse(await readFile(path, 'utf8')))));
  }
}

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
