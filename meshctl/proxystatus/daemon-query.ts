import type { KubeConfig } from '@kubernetes/client-node';
import { DAEMON_POD_SELECTOR, LABELS } from '../../names/index.js';
import { MeshError, errorMessage } from '../../runtime/index.js';
import { podHttp } from '../kube/pod-http.js';

/** The daemon's monitoring port, where its `/debug/` views are served. */
export const DAEMON_MONITORING_PORT = 15014;

/** Each daemon's own deadline for one debug view: one unreachable daemon must not hold the others' answers. */
export const DAEMON_QUERY_TIMEOUT_MS = 10_000;

export interface DaemonQuery {
  readonly meshNamespace: string;
  /** `-r/--revision`: only that revision's daemons ('' for all). */
  readonly revision: string;
  /** The daemon pods' label selector; default `app=meshd`. */
  readonly selector?: string;
  /** `/debug/syncz`, `/debug/config_dump?proxyID=…`. */
  readonly path: string;
  /** Each daemon's own deadline. */
  readonly timeoutMs: number;
}

export interface DaemonAnswers {
  /** By daemon pod name, the bodies of those that answered 200. */
  readonly answers: ReadonlyMap<string, string>;
  /** The daemons that did not, each with why. */
  readonly failures: ReadonlyMap<string, string>;
}

/**
 * Asks every running daemon pod (the reference's `AllDiscoveryDo`) in parallel through
 * port-forwards, each bounded by its own timeout: one unreachable daemon costs its own timeout,
 * not everyone's, and the others' answers are still returned.
 */
export async function queryDaemons(kubeConfig: KubeConfig, query: DaemonQuery): Promise<DaemonAnswers> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const selector = [query.selector ?? DAEMON_POD_SELECTOR, ...(query.revision !== '' ? [`${LABELS.revision}=${query.revision}`] : [])].join(',');
  const pods = (
    await kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: query.meshNamespace, labelSelector: selector, fieldSelector: 'status.phase=Running' })
  ).items;
  if (pods.length === 0)
    throw new MeshError('pod-not-found', `unable to find any meshd instances (pods labelled ${selector} in namespace ${query.meshNamespace})`);
  const answers = new Map<string, string>();
  const failures = new Map<string, string>();
  await Promise.all(
    pods.map(async (pod) => {
      const name = pod.metadata?.name ?? '';
      let timer: NodeJS.Timeout | undefined;
      try {
        const response = await Promise.race([
          podHttp(kubeConfig, { namespace: query.meshNamespace, pod: name, port: DAEMON_MONITORING_PORT, method: 'GET', path: query.path }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${query.timeoutMs} ms`)), query.timeoutMs);
          }),
        ]);
        if (response.status === 200) answers.set(name, response.body);
        else failures.set(name, `${response.status} ${response.body.trim()}`);
      } catch (error) {
        failures.set(name, errorMessage(error));
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { answers, failures };
}
