import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes an executable named `envoy` into `dir` for tests of the agent's supervision (no Envoy
 * binary exists on these machines). It answers `--version`; otherwise it records its arguments
 * in `<dir>/runs.log` (one JSON line per start), reads the bootstrap given with `-c`, and serves
 * Envoy's admin paths the agent uses on the bootstrap's admin address: `/ready`, `/stats` (CDS
 * and LDS accepted once the file `<dir>/synced` exists) and `POST /drain_listeners` (recorded
 * in `<dir>/drains.log`). SIGTERM ends it with code 0.
 */
export function writeFakeEnvoy(dir: string): string {
  const script = join(dir, 'fake-envoy.mjs');
  writeFileSync(
    script,
    `import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
const dir = ${JSON.stringify(dir)};
const args = process.argv.slice(2);
if (args[0] === '--version') { console.log('envoy  fake/1.0/Clean/RELEASE/BoringSSL'); process.exit(0); }
appendFileSync(dir + '/runs.log', JSON.stringify({ pid: process.pid, args }) + '\\n');
const bootstrap = JSON.parse(readFileSync(args[args.indexOf('-c') + 1], 'utf8'));
const admin = bootstrap.admin.address.socket_address;
const server = createServer((req, res) => {
  const path = req.url.split('?')[0];
  if (path === '/ready') { res.end('LIVE\\n'); return; }
  if (path === '/stats') {
    const accepted = existsSync(dir + '/synced') ? 1 : 0;
    res.end('cluster_manager.cds.update_success: ' + accepted + '\\nlistener_manager.lds.update_success: ' + accepted + '\\n');
    return;
  }
  if (path === '/drain_listeners' && req.method === 'POST') { appendFileSync(dir + '/drains.log', req.url + '\\n'); res.end('OK\\n'); return; }
  res.statusCode = 404; res.end();
});
server.listen(admin.port_value, admin.address);
process.on('SIGTERM', () => { appendFileSync(dir + '/runs.log', JSON.stringify({ pid: process.pid, terminated: true }) + '\\n'); process.exit(0); });
`,
  );
  const envoy = join(dir, 'envoy');
  writeFileSync(envoy, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)} "$@"\n`);
  chmodSync(envoy, 0o755);
  return envoy;
}

export interface FakeEnvoyRun {
  readonly pid: number;
  readonly args?: string[];
  readonly terminated?: boolean;
}

/** The starts and SIGTERMs the fake recorded. */
export function fakeEnvoyRuns(text: string): FakeEnvoyRun[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as FakeEnvoyRun);
}
