import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { join, resolve } from 'node:path';
import { errorMessage, formatDuration, type BuildInfo } from '../../runtime/index.js';
import { kubeMessage } from '../kube/port-forward.js';
import { fetchMeshVersions, fetchProxyVersions } from '../version/mesh-versions.js';
import { renderVersionReport } from '../version/render-version.js';
import { ARCHIVE_ROOT, newReportTree, writeArchive, writeTree, type ReportTree } from './archive.js';
import type { BugReportOptions } from './bug-report-options.js';
import { clusterContext, clusterTargets, type ClusterTarget } from './gather-cluster.js';
import { DAEMON_NAME, DAEMON_POD_SELECTOR, PROXY_CONTAINER } from '../../names/index.js';
import { gatherPod, podFolder, podTargetPaths, type PodTarget } from './gather-pods.js';
import { newSelection, podViewOf } from './selection.js';
import { renderReportLog, type PodCritical } from './report-log.js';

/** How many targets are gathered at once. */
const PARALLEL_TARGETS = 4;
/** Each daemon's deadline for the versions. */
const VERSION_TIMEOUT_MS = 10_000;

export interface BugReportDeps {
  readonly kubeConfig: KubeConfig;
  readonly client: BuildInfo;
  /** One line of progress for the terminal. */
  readonly progress: (line: string) => void;
  readonly now: () => Date;
  /** Where `bug-report.tar.gz` goes without `--dir`. */
  readonly cwd: string;
}

export interface BugReportResult {
  /** Undefined for `--dry-run`. */
  readonly archivePath?: string;
  readonly timedOut: boolean;
  readonly failures: number;
}

/** One unit of gathering: a line of progress once done. */
interface Task {
  readonly what: string;
  run(): Promise<void>;
}

/**
 * `meshctl bug-report`: the selected namespaces' cluster state, each daemon's log and debug views,
 * each selected meshed pod's proxy log and admin views, and the versions, into
 * `bug-report.tar.gz` (in the current folder, or beside the tree written under `--dir`). One
 * target failing is logged and the others still gathered; when `--timeout` runs out, what was
 * gathered is archived. `--dry-run` prints the plan and writes nothing.
 */
export async function runBugReport(deps: BugReportDeps, options: BugReportOptions): Promise<BugReportResult> {
  const started = deps.now();
  const log: string[] = [];
  const note = (line: string): void => void log.push(`${deps.now().toISOString()} ${line}`);
  const tree = newReportTree();
  const selection = newSelection(options.include, options.exclude, options.meshNamespace);
  const k8s = await import('@kubernetes/client-node');
  const core = deps.kubeConfig.makeApiClient(k8s.CoreV1Api);
  deps.progress(`Target cluster context: ${deps.kubeConfig.getCurrentContext()}`);
  note(`bug-report started; context ${clusterContext(deps.kubeConfig).trim().replace(/\n/g, ', ')}`);
  note(`settings: ${describeOptions(options)}`);

  const allNamespaces = (await core.listNamespace()).items.map((ns) => ns.metadata?.name ?? '').sort();
  const namespaces = allNamespaces.filter((name) => selection.namespace(name));
  const pods = (await core.listPodForAllNamespaces()).items.filter((pod) => pod.status?.phase === 'Running');
  const daemons = pods.filter((pod) => pod.metadata?.namespace === options.meshNamespace && pod.metadata?.labels?.['app'] === DAEMON_NAME);
  const proxies = pods.filter((pod) => (pod.spec?.containers ?? []).some((c) => c.name === PROXY_CONTAINER) && selection.pod(podViewOf(pod)));
  const podTargets: PodTarget[] = [...daemons.map((pod) => targetOf('meshd', pod)), ...proxies.map((pod) => targetOf('proxies', pod))];
  note(`namespaces selected: ${namespaces.join(', ') || '(none)'}; daemons: ${daemons.length}; proxies: ${proxies.length}`);
  if (daemons.length === 0) note(`no running meshd pod (label ${DAEMON_POD_SELECTOR}) in namespace ${options.meshNamespace}`);
  const cluster = clusterTargets(k8s, deps.kubeConfig, namespaces, options.fullSecrets);

  if (options.dryRun) {
    deps.progress('Dry run: nothing is gathered or written. Would gather:');
    deps.progress('  versions');
    for (const target of cluster) deps.progress(`  ${target.path}`);
    for (const target of podTargets) for (const path of podTargetPaths(target)) deps.progress(`  ${path}`);
    deps.progress('  analyze: skipped (no analyzer yet)');
    return { timedOut: false, failures: 0 };
  }

  let failures = 0;
  const fail = (what: string, why: string): void => {
    failures++;
    note(`FAILED ${what}: ${why}`);
  };
  const criticals: PodCritical[] = [];
  const tasks: Task[] = [
    { what: 'versions', run: async () => tree.add('versions', await versionsText(deps, options, note)) },
    ...groupsOf(cluster).map(([group, targets]) => ({
      what: group === 'cluster-wide' ? 'cluster-wide resources' : `namespace ${group}`,
      run: async () => {
        for (const target of targets) {
          try {
            tree.add(target.path, await target.read());
          } catch (error) {
            fail(target.path, errorMessage(error));
          }
        }
      },
    })),
    ...podTargets.map((target) => ({
      what: `${target.role === 'meshd' ? 'meshd' : 'proxy'} ${target.namespace}/${target.pod}`,
      run: async () => {
        const gathered = await gatherPod(deps.kubeConfig, target, {
          until: options.until,
          criticalErrs: options.criticalErrs,
          ignoreErrs: options.ignoreErrs,
          ...(options.since ? { since: options.since } : {}),
        });
        for (const [path, content] of gathered.files) tree.add(path, content);
        for (const why of gathered.failures) fail(podFolder(target), why);
        if (gathered.log && !tree.sealed)
          criticals.push({
            pod: `${target.namespace}/${target.pod}`,
            folder: podFolder(target),
            count: gathered.log.criticalErrors,
            samples: gathered.log.samples,
          });
      },
    })),
  ];
  const timedOut = await runWithin(
    tasks,
    options.timeoutMs,
    tree,
    (task, ms) => {
      deps.progress(`Gathered ${task.what} (${ms} ms)`);
      note(`gathered ${task.what} in ${ms} ms`);
    },
    deps.now,
  );
  tree.seal();
  if (timedOut) {
    note(`--timeout ${formatDuration(options.timeoutMs)} expired: gathering stopped; the archive holds what was gathered`);
    deps.progress(`Timeout of ${formatDuration(options.timeoutMs)} reached: archiving what was gathered.`);
  }
  note('analyze: skipped, the analyzer does not exist yet');
  note(`gathering took ${deps.now().getTime() - started.getTime()} ms; ${tree.files().size} files; ${failures} failures`);
  tree.append('bug-report.log', renderReportLog(criticals, options.criticalErrs, log));

  const parent = options.dir === '' ? undefined : resolve(deps.cwd, options.dir);
  if (parent) await writeTree(tree, parent);
  const archivePath = join(parent ?? deps.cwd, `${ARCHIVE_ROOT}.tar.gz`);
  deps.progress(`Creating an archive at ${archivePath}.`);
  await writeArchive(tree, archivePath, deps.now());
  return { archivePath, timedOut, failures };
}

function groupsOf(targets: readonly ClusterTarget[]): [string, ClusterTarget[]][] {
  const groups = new Map<string, ClusterTarget[]>();
  for (const target of targets) groups.set(target.group, [...(groups.get(target.group) ?? []), target]);
  return [...groups];
}

function targetOf(role: PodTarget['role'], pod: V1Pod): PodTarget {
  return { role, namespace: pod.metadata?.namespace ?? '', pod: pod.metadata?.name ?? '' };
}

/**
 * Runs the tasks, a few at a time, until all are done or the time runs out (true): then the
 * tree is sealed at once, so answers still on their way are left out.
 */
async function runWithin(
  tasks: readonly Task[],
  timeoutMs: number,
  tree: ReportTree,
  done: (task: Task, ms: number) => void,
  now: () => Date,
): Promise<boolean> {
  let next = 0;
  let expired = false;
  const worker = async (): Promise<void> => {
    while (!expired && next < tasks.length) {
      const task = tasks[next++] as Task;
      const start = now().getTime();
      await task.run();
      if (!expired) done(task, now().getTime() - start);
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<boolean>((resolveDeadline) => {
    timer = setTimeout(() => {
      expired = true;
      tree.seal();
      resolveDeadline(true);
    }, timeoutMs);
  });
  const all = Promise.all(Array.from({ length: PARALLEL_TARGETS }, worker)).then(() => false);
  try {
    return await Promise.race([all, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function versionsText(deps: BugReportDeps, options: BugReportOptions, note: (line: string) => void): Promise<string> {
  const query = { meshNamespace: options.meshNamespace, revision: '', timeoutMs: VERSION_TIMEOUT_MS };
  try {
    const versions = await fetchMeshVersions(deps.kubeConfig, query);
    for (const failure of versions.failures) note(failure);
    const servers = versions.servers ?? [];
    const dataPlane = servers.length > 0 ? await fetchProxyVersions(deps.kubeConfig, query) : undefined;
    return renderVersionReport({ client: deps.client, servers, ...(dataPlane ? { dataPlane } : {}) }, { short: false });
  } catch (error) {
    note(`versions of the control plane: ${kubeMessage(error)}`);
    return renderVersionReport({ client: deps.client }, { short: false });
  }
}

function describeOptions(options: BugReportOptions): string {
  return [
    `mesh-namespace=${options.meshNamespace}`,
    `include=[${options.include.map((spec) => spec.text).join(', ')}]`,
    `exclude=[${options.exclude.map((spec) => spec.text).join(', ')}]`,
    `start-time=${options.since?.toISOString() ?? '(start of the logs)'}`,
    `end-time=${options.until.toISOString()}`,
    `critical-errs=[${options.criticalErrs.join(', ')}]`,
    `ignore-errs=[${options.ignoreErrs.join(', ')}]`,
    `full-secrets=${options.fullSecrets}`,
    `timeout=${formatDuration(options.timeoutMs)}`,
  ].join(' ');
}
