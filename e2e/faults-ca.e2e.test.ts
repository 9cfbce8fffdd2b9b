import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { waitFor } from '../testing/wait-for.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';
import { meshProxies, servedCertificate } from './testing/config-dumps.js';

// Faults end to end (issue 21, item 4, part c): the CA unreachable across a certificate renewal.
// Agents ask for 40 s workload certificates, renewed while three quarters of the lifetime are left
// (SECRET_GRACE_PERIOD_RATIO 0.75, due 10 s after issue; the 30 s left cover a daemon restart on a
// slow, busy machine: with 16 s certificates one took too long once). The daemon (and so its CA) is killed
// right after a renewal: when the next one is due, the agent retries with backoff, keeps serving
// its certificate, and traffic keeps flowing over mutual TLS; once the CA is back the agent renews
// without a restart, before the certificate it serves expires.
const ADDRESS_BLOCK = 86;
const CLIENT = 'foo/sleep-foo';
let mesh: LocalMesh;
let workDir: string;
const agentLines: string[] = [];

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'faults-ca-'));
  mesh = await startLocalMesh({
    workDir,
    addressBlock: ADDRESS_BLOCK,
    // sleep-foo calls httpbin-bar: the gateway and the unmeshed pods are left out.
    sampleFiles: ['namespaces.yaml', 'workloads-foo.yaml', 'workloads-bar.yaml'],
    agentEnv: { SECRET_TTL: '40s', SECRET_GRACE_PERIOD_RATIO: '0.75' },
    log: (line) => void (line.startsWith(`[${CLIENT}]`) && agentLines.push(line)),
  });
  await mesh.waitReady();
}, 60_000);

afterAll(async () => {
  await mesh?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

const clientIp = (): string => meshProxies(mesh).find((proxy) => proxy.id === 'sleep-foo.foo')?.podIp ?? '';
/** sleep-foo → httpbin-bar: mutual TLS between the two sidecars, each with its own workload certificate. */
const call = (): Promise<{ code: string }> => curl(['-x', mesh.proxyOf('foo'), 'http://httpbin.bar:8000/ip']);
const renewalFailures = (): string[] => agentLines.filter((line) => line.includes('cannot renew the workload certificate; retrying'));
const starts = (): number => agentLines.filter((line) => line.includes('proxy agent started')).length;

describe('the CA unreachable across a certificate renewal', () => {
  test('the agent keeps serving its certificate while retrying, traffic flows, and it renews once the CA is back', async () => {
    expect(starts()).toBe(1);
    expect((await call()).code).toBe('200');
    // Right after a renewal: the longest stretch of validity ahead.
    const first = await waitFor(() => servedCertificate(clientIp()), { description: 'the served certificate' });
    const current = await waitFor(
      async () => {
        const served = await servedCertificate(clientIp());
        return served && served.serial !== first.serial ? served : undefined;
      },
      { timeoutMs: 30_000, description: 'a renewal while the CA is up' },
    );
    await mesh.killDaemon();
    const failedBefore = renewalFailures().length;

    // The renewal falls due while the CA is gone: it fails, and is retried.
    await waitFor(() => renewalFailures().length >= failedBefore + 2, { timeoutMs: 30_000, description: 'a failed renewal and a failed retry' });
    expect(Date.now()).toBeLessThan(current.notAfter);
    expect((await servedCertificate(clientIp()))?.serial).toBe(current.serial);
    expect((await call()).code).toBe('200');
    const retries = renewalFailures()
      .slice(failedBefore)
      .map((line) => Number(/retryMs=(\d+)/.exec(line)?.[1]));
    expect(retries[1]).toBeGreaterThan(retries[0] ?? Infinity);

    await mesh.startDaemon();
    const renewed = await waitFor(
      async () => {
        const served = await servedCertificate(clientIp());
        return served && served.serial !== current.serial ? served : undefined;
      },
      { timeoutMs: 40_000, description: 'the renewed certificate after the CA came back' },
    );
    // Renewed before the old certificate expired, by the same agent process.
    expect(Date.now()).toBeLessThan(current.notAfter);
    expect(renewed.notAfter).toBeGreaterThan(current.notAfter);
    expect(starts()).toBe(1);
    expect((await call()).code).toBe('200');
  }, 150_000);
});
