import type { KubeConfig } from '@kubernetes/client-node';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { MeshError, errorMessage } from '../../runtime/index.js';
import { forwardToPod, kubeMessage } from '../kube/port-forward.js';
import { PROXY_ADMIN_PORT } from '../proxyconfig/pod-admin.js';
import { DAEMON_MONITORING_PORT } from '../proxystatus/daemon-query.js';
import { filterLog, type FilteredLog, type LogWindow } from './log-window.js';
import { DAEMON_CONTAINER, PROXY_CONTAINER } from '../../names/index.js';

/** The daemon's debug views gathered from each daemon pod (15014), as `debug/<view>`. */
export const DAEMON_DEBUG_VIEWS = ['syncz', 'adsz', 'push_status', 'configz', 'mesh', 'registryz', 'endpointz'] as const;
/** The proxy admin paths gathered from each meshed pod (15000): archive file → admin path. */
export const PROXY_ADMIN_PATHS: readonly (readonly [string, string])[] = [
  ['config_dump', '/config_dump?include_eds'],
  ['clusters', '/clusters'],
  ['listeners', '/listeners'],
  ['server_info', '/server_info'],
  ['stats/prometheus', '/stats/prometheus'],
];
/** One request's own deadline: a pod that stops answering costs this, not the whole report. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A pod gathered: a daemon (its log and debug views) or a meshed pod (its proxy's log and admin views). */
export interface PodTarget {
  readonly role: 'meshd' | 'proxies';
  readonly namespace: string;
  readonly pod: string;
}

/** What a pod gave: files by archive path, its log's critical errors, and what failed. */
export interface PodGathered {
  readonly files: ReadonlyMap<string, string>;
  readonly log?: FilteredLog;
  readonly failures: readonly string[];
}

export function podFolder(target: PodTarget): string {
  return `${target.role}/${target.namespace}/${target.pod}`;
}

/** What a pod target gathers, by archive path (for `--dry-run`). */
export function podTargetPaths(target: PodTarget): string[] {
  const folder = podFolder(target);
  if (target.role === 'meshd') return [`${folder}/${DAEMON_CONTAINER}.log`, ...DAEMON_DEBUG_VIEWS.map((view) => `${folder}/debug/${view}`)];
  return [`${folder}/${PROXY_CONTAINER}.log`, ...PROXY_ADMIN_PATHS.map(([file]) => `${folder}/${file}`)];
}

/**
 * Gathers one pod: its container's log from `since` (the API server's `sinceTime`), cut at the
 * window's end, then its views through one port-forward (15014 for a daemon, 15000 for a proxy).
 * A failing piece is noted and the rest still gathered.
 */
export async function gatherPod(kubeConfig: KubeConfig, target: PodTarget, window: LogWindow & { since?: Date }): Promise<PodGathered> {
  const folder = podFolder(target);
  const files = new Map<string, string>();
  const failures: string[] = [];
  const container = target.role === 'meshd' ? DAEMON_CONTAINER : PROXY_CONTAINER;
  let log: FilteredLog | undefined;
  try {
    log = filterLog(await readPodLog(kubeConfig, target, container, window.since), window);
    files.set(`${folder}/${container}.log`, log.text);
  } catch (error) {
    failures.push(`log of ${container}: ${errorMessage(error)}`);
  }
  const port = target.role === 'meshd' ? DAEMON_MONITORING_PORT : PROXY_ADMIN_PORT;
  const views: (readonly [string, string])[] =
    target.role === 'meshd' ? DAEMON_DEBUG_VIEWS.map((view) => [`debug/${view}`, `/debug/${view}`] as const) : [...PROXY_ADMIN_PATHS];
  let forward: Awaited<ReturnType<typeof forwardToPod>> | undefined;
  try {
    forward = await forwardToPod(kubeConfig, { namespace: target.namespace, pod: target.pod, port });
  } catch (error) {
    failures.push(`port ${port}: ${errorMessage(error)}`);
  }
  if (forward) {
    try {
      for (const [file, path] of views) {
        try {
          const answer = await httpGet(forward.address, forward.localPort, path);
          if (answer.status === 200) files.set(`${folder}/${file}`, answer.body);
          else failures.push(`${path}: ${answer.status} ${answer.body.trim().slice(0, 200)}`);
        } catch (error) {
          failures.push(`${path}: ${errorMessage(error)}`);
        }
      }
    } finally {
      await forward.close();
    }
  }
  return { files, ...(log ? { log } : {}), failures };
}

/** `GET pods/<pod>/log?container=…&timestamps=true[&sinceTime=…]`, whole. */
async function readPodLog(kubeConfig: KubeConfig, target: PodTarget, container: string, since: Date | undefined): Promise<string> {
  const { Log } = await import('@kubernetes/client-node');
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  const finished = new Promise<void>((resolve, reject) => {
    sink.on('finish', resolve);
    sink.on('error', reject);
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const abort = await new Log(kubeConfig).log(target.namespace, target.pod, container, sink, {
      timestamps: true,
      ...(since ? { sinceTime: since.toISOString() } : {}),
    });
    await Promise.race([
      finished,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          abort.abort();
          reject(new Error(`the log did not end within ${REQUEST_TIMEOUT_MS} ms`));
        }, REQUEST_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    throw new MeshError('bugreport-gather-failed', kubeMessage(error), { cause: error });
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function httpGet(host: string, port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host, port, path, method: 'GET', agent: false, timeout: REQUEST_TIMEOUT_MS }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      answer.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    outgoing.on('error', reject);
    outgoing.end();
  });
}
