// Copies the Envoy and xDS protos the project loads into xds/envoy/protos/, with everything they
// import, from the npm package that carries them (@grpc/grpc-js-xds's deps/ folders; the
// well-known google/protobuf types are built into protobufjs). Run again to move to newer protos;
// xds/envoy/protos/VERSIONS names where each tree comes from and is kept by hand.
// usage: node scripts/vendor-envoy-protos.mjs
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';

const require = createRequire(import.meta.url);
const xdsDeps = join(dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
const INCLUDE_DIRS = [
  join(xdsDeps, 'envoy-api'),
  join(xdsDeps, 'xds'),
  join(xdsDeps, 'googleapis'),
  join(xdsDeps, 'protoc-gen-validate'),
  dirname(require.resolve('protobufjs/package.json')),
];
const OUT = 'xds/envoy/protos';

// Every entry file any process loads (xds/envoy/envoy-protos.ts, cli/meshctl/meshctl-xds.ts).
const source = readFileSync('xds/envoy/envoy-protos.ts', 'utf8');
const entries = [...new Set([...source.matchAll(/'([a-z0-9_/]+\.proto)'/g)].map((m) => m[1]))];

const locate = (file) => INCLUDE_DIRS.map((dir) => join(dir, file)).find((path) => existsSync(path));
const seen = new Set();
const queue = [...entries];
while (queue.length > 0) {
  const file = queue.pop();
  if (seen.has(file)) continue;
  const path = locate(file);
  // protobufjs carries the well-known types (struct, any, duration, …) built in.
  if (!path && protobuf.common[file]) continue;
  if (!path) throw new Error(`${file}: not found in ${INCLUDE_DIRS.join(', ')}`);
  seen.add(file);
  for (const match of readFileSync(path, 'utf8').matchAll(/^import\s+(?:public\s+|weak\s+)?"([^"]+)";/gm)) queue.push(match[1]);
}

for (const top of ['envoy', 'xds', 'udpa', 'google', 'validate']) rmSync(join(OUT, top), { recursive: true, force: true });
for (const file of [...seen].sort()) {
  mkdirSync(dirname(join(OUT, file)), { recursive: true });
  copyFileSync(locate(file), join(OUT, file));
}
console.log(`${seen.size} proto files from ${entries.length} entry files into ${OUT}/`);
