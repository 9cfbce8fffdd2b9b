import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { PROJECT_ROOT } from './run-bin.js';

// `npm run build` ships the programs only: no test, no test support, no benchmark.
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

describe('the build output', () => {
  test('holds no test, test support or benchmark', () => {
    const shipped = filesUnder(join(PROJECT_ROOT, 'dist')).map((file) => relative(join(PROJECT_ROOT, 'dist'), file));
    expect(shipped.length).toBeGreaterThan(100);
    const testOnly = shipped.filter((file) => /(^|\/)testing\/|\.test\.js|^bench\//.test(file));
    expect(testOnly).toEqual([]);
  });

  test.each(['pilot-agent', 'mesh-dataplane'])('the %s bundle is ASCII and loads the Kubernetes client only if asked', (program) => {
    const dir = join(PROJECT_ROOT, 'dist/bundle', program);
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.mjs'))) {
      const source = readFileSync(join(dir, file), 'utf8');
      // One non-ASCII character makes V8 keep the whole source at two bytes a character.
      expect({ file, nonAscii: /[\u0080-\u{10ffff}]/u.exec(source)?.[0] }).toEqual({ file, nonAscii: undefined });
      // A static import would load @kubernetes/client-node (tens of MB) into every sidecar.
      expect({ file, staticImports: source.match(/^import [^;]*from "@kubernetes\/client-node"/gmu) ?? [] }).toEqual({ file, staticImports: [] });
      // The policy kinds' schemas (built when their module loads) belong to the daemon; a sidecar reads the mesh config only.
      expect({ file, policySchemas: /literal\("AuthorizationPolicy"\)/u.test(source) }).toEqual({ file, policySchemas: false });
      // zod's whole API is 750 KB of source held in every sidecar's heap; the mesh config needs its tree-shakable part only.
      expect({ file, zodClassic: /constructor\("ZodString"/u.test(source) }).toEqual({ file, zodClassic: false });
    }
  });

  /** The files a bundle's entry loads before it runs: itself and the chunks it imports statically, transitively. */
  function staticGraph(dir: string, entry: string): string[] {
    const graph = [entry];
    for (let i = 0; i < graph.length; i++) {
      const source = readFileSync(join(dir, graph[i] ?? ''), 'utf8');
      for (const [, chunk] of source.matchAll(/^(?:import|export) [^;]*?from "\.\/([^"]+)"/gmu)) if (chunk && !graph.includes(chunk)) graph.push(chunk);
      for (const [, chunk] of source.matchAll(/^import "\.\/([^"]+)"/gmu)) if (chunk && !graph.includes(chunk)) graph.push(chunk);
    }
    return graph;
  }

  test.each(['pilot-discovery', 'meshctl'])('the %s bundle has its worker threads beside it', (program) => {
    // The parse and signing pools start their threads from `./<name>-worker.js` beside their own module.
    const dir = join(PROJECT_ROOT, 'dist/bundle', program);
    for (const worker of ['parse-worker.js', 'signing-worker.js']) expect({ worker, exists: existsSync(join(dir, worker)) }).toEqual({ worker, exists: true });
  });

  /** Whether a bundle's file holds a module of `pkg` (esbuild names each module's path from the working directory: `../main/node_modules/…` in a worktree whose node_modules is a link). */
  const holds = (dir: string, file: string, pkg: string): boolean =>
    new RegExp(`^// (?:\\.\\./)*(?:[\\w.-]+/)*?node_modules/${pkg}/`, 'mu').test(readFileSync(join(dir, file), 'utf8'));

  test('the daemon loads the Kubernetes client only once it talks to a cluster', () => {
    const dir = join(PROJECT_ROOT, 'dist/bundle/pilot-discovery');
    expect(staticGraph(dir, 'pilot-discovery.js').filter((file) => holds(dir, file, '@kubernetes/client-node'))).toEqual([]);
    expect(readdirSync(dir).some((file) => file.endsWith('.js') && holds(dir, file, '@kubernetes/client-node'))).toBe(true);
  });

  test('the meshctl bundle loads the Kubernetes client only for a command that talks to a cluster', () => {
    const dir = join(PROJECT_ROOT, 'dist/bundle/meshctl');
    const holdsClient = (file: string): boolean => holds(dir, file, '@kubernetes/client-node');
    const graph = staticGraph(dir, 'meshctl.js');
    expect(graph.length).toBeGreaterThan(1);
    expect(graph.filter(holdsClient)).toEqual([]);
    // …yet it is in the bundle, in a chunk of its own.
    expect(readdirSync(dir).some((file) => file.endsWith('.js') && holdsClient(file))).toBe(true);
    // `meshctl validate` (meshctl/validate/index.ts, its own chunk) loads neither the client nor gRPC.
    const validate = readdirSync(dir).filter((file) => /^validate-\w+\.js$/u.test(file));
    expect(validate).toHaveLength(1);
    const validateGraph = staticGraph(dir, validate[0] ?? '');
    expect(validateGraph.filter((file) => holdsClient(file) || holds(dir, file, '@grpc/grpc-js'))).toEqual([]);
  });
});
