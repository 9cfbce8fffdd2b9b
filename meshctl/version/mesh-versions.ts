import type { CoreV1Api, KubeConfig, V1Pod } from '@kubernetes/client-node';
import { MeshError, errorMessage, type BuildInfo } from '../../runtime/index.js';
import { podHttp } from '../kube/pod-http.js';
import { kubeMessage } from '../kube/port-forward.js';
import { DAEMON_MONITORING_PORT, queryDaemons } from '../proxystatus/daemon-query.js';
import { parseSyncz } from '../proxystatus/proxy-status.js';
import { DAEMON_POD_SELECTOR, LABELS } from '../../names/index.js';

/** One control-plane instance's version (the reference's `ServerInfo`). */
export interface ServerInfo {
  readonly Component: string;
  readonly Revision: string;
  readonly Info: BuildInfo;
}

/** One proxy's version as its daemon reports it (the reference's `ProxyInfo`). */
export interface ProxyInfo {
  readonly ID: string;
  readonly MeshVersion: string;
}

export interface MeshVersionQuery {
  readonly meshNamespace: string;
  /** `-r/--revision`: only that revision's daemons ('' for all). */
  readonly revision: string;
  /** Each daemon's own deadline. */
  readonly timeoutMs: number;
}

/** What the control plane answered: its versions, or why there are none, and per-pod failures. */
export interface MeshVersions {
  /** Undefined when no daemon runs (the reference then says the mesh is not present). */
  readonly servers?: readonly ServerInfo[];
  readonly failures: readonly string[];
}

function daemonSelector(revision: string): string {
  return [DAEMON_POD_SELECTOR, ...(revision !== '' ? [`${LABELS.revision}=${revision}`] : [])].join(',');
}

/**
 * The version of every running daemon pod, read as the reference reads it: `GET
 * pods/<pod>:15014/proxy/version` through the API server, falling back to a port-forward to the
 * same port when the proxy fails. All pods in parallel, each bounded by its own timeout.
 */
export async function fetchMeshVersions(kubeConfig: KubeConfig, query: MeshVersionQuery): Promise<MeshVersions> {
  const k8s = await import('@kubernetes/client-node');
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const pods = (
    await core.listNamespacedPod({ namespace: query.meshNamespace, labelSelector: daemonSelector(query.revision), fieldSelector: 'status.phase=Running' })
  ).items;
  if (pods.length === 0) return { failures: [] };
  const failures: string[] = [];
  const servers: ServerInfo[] = [];
  const answers = await Promise.all(
    pods.map((pod) => withTimeout(versionOf(kubeConfig, core, pod), query.timeoutMs).catch((error: unknown) => errorMessage(error))),
  );
  answers.forEach((answer, i) => {
    const pod = pods[i] as V1Pod;
    const name = pod.metadata?.name ?? '';
    if (typeof answer === 'string') failures.push(`error reading the version of ${query.meshNamespace}.${name}: ${answer}`);
    else servers.push({ Component: name, Revision: pod.metadata?.labels?.[LABELS.revision] ?? 'default', Info: answer });
  });
  servers.sort((a, b) => a.Component.localeCompare(b.Component));
  return { servers, failures };
}

async function versionOf(kubeConfig: KubeConfig, core: CoreV1Api, pod: V1Pod): Promise<BuildInfo> {
  const name = pod.metadata?.name ?? '';
  const namespace = pod.metadata?.namespace ?? '';
  let viaProxy: string;
  try {
    const body: unknown = await core.connectGetNamespacedPodProxyWithPath({ name: `${name}:${DAEMON_MONITORING_PORT}`, namespace, path: 'version' });
    return asBuildInfo(typeof body === 'string' ? (JSON.parse(body) as unknown) : body);
  } catch (error) {
    viaProxy = kubeMessage(error);
  }
  const answer = await podHttp(kubeConfig, { namespace, pod: name, port: DAEMON_MONITORING_PORT, method: 'GET', path: '/version' }).catch((error: unknown) => {
    throw new MeshError('version-query-failed', `pod proxy: ${viaProxy}; port-forward: ${errorMessage(error)}`);
  });
  if (answer.status !== 200) throw new MeshError('version-query-failed', `pod proxy: ${viaProxy}; port-forward: /version answered ${answer.status}`);
  return asBuildInfo(JSON.parse(answer.body) as unknown);
}

function asBuildInfo(value: unknown): BuildInfo {
  if (typeof value !== 'object' || value === null || typeof (value as BuildInfo).version !== 'string')
    throw new MeshError('version-query-failed', '/version is not build information');
  return value as BuildInfo;
}

function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The proxies' versions from every daemon's `/debug/syncz` (each entry's `meshVersion`), or
 * undefined when they cannot be read (the reference then prints no data plane line).
 */
export async function fetchProxyVersions(kubeConfig: KubeConfig, query: MeshVersionQuery): Promise<ProxyInfo[] | undefined> {
  try {
    const { answers, failures } = await queryDaemons(kubeConfig, { ...query, path: '/debug/syncz' });
    if (answers.size === 0 && failures.size > 0) return undefined;
    return [...answers].flatMap(([daemon, body]) => parseSyncz(daemon, body).map((entry) => ({ ID: entry.proxy, MeshVersion: entry.meshVersion ?? '' })));
  } catch {
    return undefined;
  }
}
