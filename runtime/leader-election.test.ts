import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CoordinationV1Api, CoreV1Api, type V1Lease } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble } from '../apiserver-double/index.js';
import { newRealClock } from './clock.js';
import { MeshError } from './errors.js';
import { newLeaderElector, type LeaderElectorOptions } from './leader-election.js';
import { newNopLogger } from './log/logger.js';
import { newManager, type Manager } from './manager.js';
import { waitFor } from '../testing/wait-for.js';

const NAMESPACE = 'mesh-system';
// Short timings on a real server: 1 s lease, 0.7 s renew deadline, 0.2 s retry.
const LEASE_MS = 1000;
const RENEW_MS = 700;
const RETRY_MS = 200;
// Scheduling slack for a loaded CI machine.
const SLACK_MS = 400;

let api: ApiServerDouble;
let coordination: CoordinationV1Api;
let leaseCounter = 0;

beforeAll(async () => {
  api = await startApiServerDouble({ host: '127.0.0.1' });
  coordination = api.kubeConfig().makeApiClient(CoordinationV1Api);
  await api
    .kubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
});

afterAll(async () => {
  await api?.close();
});

async function readLease(name: string): Promise<V1Lease | undefined> {
  try {
    return await coordination.readNamespacedLease({ name, namespace: NAMESPACE });
  } catch {
    return undefined;
  }
}

async function holderOf(name: string): Promise<string> {
  return (await readLease(name))?.spec?.holderIdentity ?? '';
}

function electionOptions(name: string, identity: string): LeaderElectorOptions {
  return {
    kubeConfig: api.kubeConfig(),
    namespace: NAMESPACE,
    name,
    identity,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_MS,
    retryPeriodMs: RETRY_MS,
    clock: newRealClock(),
    log: newNopLogger('leader'),
  };
}

/** Tracks which candidates run leader-elected work, and whether two ever did at once. */
class LeaderWork {
  readonly active = new Set<string>();
  readonly startedAt = new Map<string, number>();
  maxActive = 0;

  runnableFor(identity: string): { name: string; needLeaderElection(): boolean; start(signal: AbortSignal): Promise<void> } {
    return {
      name: `leader-work-${identity}`,
      needLeaderElection: () => true,
      start: async (signal) => {
        this.active.add(identity);
        this.startedAt.set(identity, Date.now());
        this.maxActive = Math.max(this.maxActive, this.active.size);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        this.active.delete(identity);
      },
    };
  }
}

interface Candidate {
  manager: Manager;
  abort: AbortController;
  result: Promise<unknown>;
}

function startCandidate(lease: string, identity: string, work: LeaderWork, extra: Partial<LeaderElectorOptions> = {}): Candidate {
  const manager = newManager({
    log: newNopLogger('manager'),
    shutdownDurationMs: 3000,
    leaderElection: { ...electionOptions(lease, identity), ...extra },
  });
  manager.add(work.runnableFor(identity));
  const abort = new AbortController();
  const result = manager.start(abort.signal).then(
    () => undefined,
    (error: unknown) => error,
  );
  return { manager, abort, result };
}

async function stopAll(...candidates: (Candidate | undefined)[]): Promise<void> {
  for (const candidate of candidates) candidate?.abort.abort();
  await Promise.all(candidates.flatMap((candidate) => (candidate ? [candidate.result] : [])));
}

function newLeaseName(): string {
  leaseCounter += 1;
  return `meshd-leader-${leaseCounter}`;
}

describe('leader election on a Lease', () => {
  test('the first candidate creates the lease with MicroTime timestamps, renews it and releases it at stop', async () => {
    const lease = newLeaseName();
    const started: string[] = [];
    const elector = newLeaderElector({ ...electionOptions(lease, 'meshd-a'), onStartedLeading: () => started.push('a') });
    const abort = new AbortController();
    const running = elector.run(abort.signal);
    try {
      await waitFor(() => elector.isLeader(), { description: 'leadership' });
      expect(started).toEqual(['a']);
      const created = await readLease(lease);
      expect(created?.spec?.holderIdentity).toBe('meshd-a');
      expect(created?.spec?.leaseDurationSeconds).toBe(1);
      expect(created?.spec?.leaseTransitions).toBe(0);

      // On the wire the times are RFC 3339 with microseconds, as a Go MicroTime.
      const raw = (await (await fetch(`${api.url}/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/${lease}`)).json()) as {
        spec: { renewTime: string; acquireTime: string };
      };
      expect(raw.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(raw.spec.acquireTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

      const firstRenew = String(created?.spec?.renewTime);
      await waitFor(async () => String((await readLease(lease))?.spec?.renewTime) !== firstRenew, { description: 'a renewal' });
      const renewed = await readLease(lease);
      expect(String(renewed?.spec?.acquireTime)).toBe(String(created?.spec?.acquireTime));
      expect(renewed?.spec?.leaseTransitions).toBe(0);
    } finally {
      abort.abort();
      await running;
    }
    expect(elector.isLeader()).toBe(false);
    const released = await readLease(lease);
    expect(released?.spec?.holderIdentity ?? '').toBe('');
    expect(released?.spec?.leaseDurationSeconds).toBe(1);
    expect(released?.spec?.leaseTransitions).toBe(0);
  });

  test('two candidates racing for a missing lease: exactly one wins', async () => {
    const lease = newLeaseName();
    const electors = ['meshd-a', 'meshd-b'].map((id) => newLeaderElector(electionOptions(lease, id)));
    const abort = new AbortController();
    const runs = electors.map((e) => e.run(abort.signal));
    try {
      await waitFor(() => electors.some((e) => e.isLeader()), { description: 'a leader' });
      const settleUntil = Date.now() + 3 * RETRY_MS;
      await waitFor(() => Date.now() > settleUntil, { description: 'a few retry periods', timeoutMs: 2000 });
      const leaders = electors.filter((e) => e.isLeader()).map((e) => e.identity);
      expect(leaders).toHaveLength(1);
      expect(await holderOf(lease)).toBe(leaders[0]);
      expect(electors.map((e) => e.getLeader())).toEqual([leaders[0], leaders[0]]);
    } finally {
      abort.abort();
      await Promise.all(runs);
    }
  });

  test('hand-over between two managers when the leader stops and releases: one leader at a time', async () => {
    const lease = newLeaseName();
    const work = new LeaderWork();
    const a = startCandidate(lease, 'meshd-a', work);
    let b: Candidate | undefined;
    try {
      await waitFor(() => work.active.has('meshd-a'), { description: 'a leads' });
      expect(await holderOf(lease)).toBe('meshd-a');
      b = startCandidate(lease, 'meshd-b', work);

      // b stays a follower for longer than a lease duration while a keeps renewing.
      const followerUntil = Date.now() + LEASE_MS + 2 * RETRY_MS;
      await waitFor(() => Date.now() > followerUntil, { description: 'one lease duration to pass', timeoutMs: LEASE_MS * 3 });
      expect(work.active).toEqual(new Set(['meshd-a']));
      expect(b.manager.isLeader()).toBe(false);
      expect(await holderOf(lease)).toBe('meshd-a');

      const stoppedAt = Date.now();
      a.abort.abort();
      expect(await a.result).toBeUndefined();
      await waitFor(() => work.active.has('meshd-b'), { description: 'b takes over', timeoutMs: LEASE_MS + 2000 });
      // Released at shutdown: b takes over on its next attempt, well within a lease duration.
      expect((work.startedAt.get('meshd-b') as number) - stoppedAt).toBeLessThan(LEASE_MS);
      const taken = await readLease(lease);
      expect(taken?.spec?.holderIdentity).toBe('meshd-b');
      expect(taken?.spec?.leaseTransitions).toBe(1);
      expect(work.maxActive).toBe(1);
    } finally {
      await stopAll(a, b);
    }
  });

  test('a leader that dies without releasing is replaced once the lease expires', async () => {
    const lease = newLeaseName();
    const work = new LeaderWork();
    const a = startCandidate(lease, 'meshd-a', work, { releaseOnCancel: false });
    let b: Candidate | undefined;
    try {
      await waitFor(() => work.active.has('meshd-a'), { description: 'a leads' });
      // No jitter, so the bound below is tight: last change seen + lease duration + one retry.
      b = startCandidate(lease, 'meshd-b', work, { jitterFactor: 0 });
      const diedAt = Date.now();
      a.abort.abort();
      expect(await a.result).toBeUndefined();
      expect(await holderOf(lease)).toBe('meshd-a');

      await waitFor(() => work.active.has('meshd-b'), { description: 'b takes over', timeoutMs: LEASE_MS * 4 });
      const takeoverMs = (work.startedAt.get('meshd-b') as number) - diedAt;
      // b may first see a's last renewal up to one retry after it was written.
      expect(takeoverMs).toBeGreaterThanOrEqual(LEASE_MS - RETRY_MS - 100);
      expect(takeoverMs).toBeLessThan(LEASE_MS + 2 * RETRY_MS + SLACK_MS);
      const taken = await readLease(lease);
      expect(taken?.spec?.holderIdentity).toBe('meshd-b');
      expect(taken?.spec?.leaseTransitions).toBe(1);
      expect(work.maxActive).toBe(1);
    } finally {
      await stopAll(a, b);
    }
  });

  test('a leader that cannot renew within the renew deadline gives up and its manager stops with leader-election-lost', async () => {
    const lease = newLeaseName();
    const work = new LeaderWork();
    const a = startCandidate(lease, 'meshd-a', work);
    try {
      await waitFor(() => work.active.has('meshd-a'), { description: 'a leads' });
      // Another writer takes the lease for a long time: a's renewals now conflict or find it held.
      const current = (await readLease(lease)) as V1Lease;
      await coordination.replaceNamespacedLease({
        name: lease,
        namespace: NAMESPACE,
        body: { ...current, spec: { ...current.spec, holderIdentity: 'intruder', leaseDurationSeconds: 3600 } },
      });
      const lostAt = Date.now();
      const error = await a.result;
      expect(error).toBeInstanceOf(MeshError);
      expect((error as MeshError).code).toBe('leader-election-lost');
      expect(Date.now() - lostAt).toBeLessThan(RETRY_MS + RENEW_MS + SLACK_MS);
      expect(work.active.size).toBe(0);
      expect(await holderOf(lease)).toBe('intruder');
    } finally {
      await stopAll(a);
    }
  });

  test.each([
    { name: 'lease duration not above renew deadline', options: { leaseDurationMs: 700, renewDeadlineMs: 700 } },
    { name: 'renew deadline not above jitter * retry period', options: { renewDeadlineMs: 200, retryPeriodMs: 200 } },
    { name: 'empty identity', options: { identity: '' } },
  ])('rejects invalid options: $name', ({ options }) => {
    expect(() => newLeaderElector({ ...electionOptions('invalid', 'meshd-a'), ...options })).toThrow(MeshError);
  });
});
