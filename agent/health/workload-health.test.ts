import { afterEach, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newMetrics, newNopLogger, newRealClock } from '../../runtime/index.js';
import { waitFor } from '../../testing/wait-for.js';
import { newStatusServer } from '../proxy/status-server.js';
import { newAgentReports, type AgentReport } from '../xds-proxy/agent-reports.js';
import { HEALTH_INFORMATION_TYPE } from '../../xds/envoy/type-urls.js';
import { parseReadinessProbe } from './readiness-probe.js';
import { newWorkloadHealth, type WorkloadHealth } from './workload-health.js';

// The agent's readiness on the status port follows the probe, and each change is a report.
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

test('the status port is ready only while the app is healthy; each change is reported', async () => {
  const work = mkdtempSync(join(tmpdir(), 'workload-health-'));
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
  const flag = join(work, 'ready');
  const reports = newAgentReports();
  const sent: AgentReport[] = [];
  reports.listen((report) => sent.push(report));
  const probe = parseReadinessProbe({ exec: { command: ['test', '-e', flag] }, periodSeconds: 0.01, initialDelaySeconds: 0.05 });
  if (!probe) throw new Error('no probe');
  const health: WorkloadHealth = newWorkloadHealth({ probe, reports, clock: newRealClock(), log: newNopLogger('healthcheck') });
  const status = newStatusServer({ notReady: () => health.notReady(), metrics: newMetrics('pilot-agent') });
  const port = await status.listen('127.0.0.1', 0);
  cleanups.push(() => status.close());
  const ready = async (): Promise<[number, string]> => {
    const response = await fetch(`http://127.0.0.1:${port}/healthz/ready`);
    return [response.status, await response.text()];
  };

  // Before the first verdict (the initial delay), not ready.
  expect(await ready()).toEqual([503, 'the application health is not known yet\n']);
  health.checker.start();
  cleanups.push(() => health.checker.stop());
  await waitFor(() => sent.length === 1, { description: 'the first report' });
  expect(sent[0]).toEqual({ typeUrl: HEALTH_INFORMATION_TYPE, errorDetail: { code: 13, message: 'exit status 1' } });
  expect(await ready()).toEqual([503, 'the application is not healthy: exit status 1\n']);

  writeFileSync(flag, '');
  await waitFor(() => sent.length === 2, { description: 'the healthy report' });
  expect(sent[1]).toEqual({ typeUrl: HEALTH_INFORMATION_TYPE });
  expect(await ready()).toEqual([200, '']);
  expect(reports.latest()).toEqual([{ typeUrl: HEALTH_INFORMATION_TYPE }]);
});
