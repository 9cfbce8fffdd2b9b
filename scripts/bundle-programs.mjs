// Bundles the programs whose start time matters (the agent beside every proxy, and the embedded
// data plane it starts) into one module each: Node then loads one file instead of a few hundred,
// which takes about a third off the agent's start. Runs after `tsc`, on its output.
import { build } from 'esbuild';

const PROGRAMS = ['pilot-agent', 'mesh-dataplane'];

await Promise.all(
  PROGRAMS.map((name) =>
    build({
      entryPoints: { [name]: `dist/cli/${name}.js` },
      outdir: `dist/bundle/${name}`,
      outExtension: { '.js': '.mjs' },
      // What is only imported dynamically (the HTTP framework) goes in its own chunk, loaded if used.
      splitting: true,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // CommonJS dependencies call require(); an ES module has none of its own.
      banner: { js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);" },
      // Only the daemon talks to Kubernetes; its client is large and never loaded by these programs.
      external: ['@kubernetes/client-node'],
      logLevel: 'warning',
    }),
  ),
);
