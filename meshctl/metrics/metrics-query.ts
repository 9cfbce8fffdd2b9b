import type { KubeConfig } from '@kubernetes/client-node';
import { MeshError, errorMessage } from '../../runtime/index.js';
import { addonPod, type Addon } from '../dashboard/dashboard.js';
import { forwardToPod } from '../kube/port-forward.js';
import { metricsQueries, type WorkloadMetrics, type WorkloadTarget } from './workload-metrics.js';

/** The metrics add-on: pods labelled `app=prometheus` in the mesh namespace, its HTTP API on 9090. */
export const METRICS_ADDON: Addon = { command: 'metrics-store', title: 'metrics store', selector: 'app=prometheus', port: 9090, path: '' };

/** Runs one instant query; the value of its single sample, 0 for an empty result, NaN as Prometheus says it. */
export async function queryScalar(baseUrl: string, query: string, timeoutMs = 10_000): Promise<number> {
  const url = `${baseUrl}/api/v1/query?${new URLSearchParams({ query })}`;
  let body: { status?: string; error?: string; errorType?: string; data?: { resultType?: string; result?: { value?: [number, string] }[] } };
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new MeshError('metrics-query-failed', `HTTP ${response.status}: ${text.slice(0, 200).trim()}`);
    }
  } catch (error) {
    throw new MeshError('metrics-query-failed', `error querying the metrics store: ${errorMessage(error)}`, { cause: error });
  }
  if (body.status !== 'success')
    throw new MeshError('metrics-query-failed', `error querying the metrics store: ${body.errorType ?? 'error'}: ${body.error ?? 'no error text'}`);
  const [first] = body.data?.result ?? [];
  if (!first?.value) return 0;
  return Number(first.value[1]);
}

/** One workload's row: its five queries, side by side. */
export async function workloadMetrics(baseUrl: string, target: WorkloadTarget, label: string): Promise<WorkloadMetrics> {
  const queries = metricsQueries(target);
  try {
    const [totalRps, errorRps, p50Ms, p90Ms, p99Ms] = await Promise.all(
      [queries.totalRps, queries.errorRps, queries.p50Ms, queries.p90Ms, queries.p99Ms].map((query) => queryScalar(baseUrl, query)),
    );
    return { workload: label, totalRps: totalRps ?? 0, errorRps: errorRps ?? 0, p50Ms: p50Ms ?? NaN, p90Ms: p90Ms ?? NaN, p99Ms: p99Ms ?? NaN };
  } catch (error) {
    throw new MeshError('metrics-query-failed', `could not build metrics for workload '${label}': ${errorMessage(error)}`, { cause: error });
  }
}

export interface MetricsRequest {
  /** `-i`: where the add-on runs. */
  readonly meshNamespace: string;
  /** The targets as typed (`name[.namespace]`), parsed. */
  readonly workloads: readonly { readonly label: string; readonly target: WorkloadTarget }[];
}

/** Finds the add-on, port-forwards to it, and gathers every workload's row (in the order given). */
export async function gatherWorkloadMetrics(kubeConfig: KubeConfig, request: MetricsRequest): Promise<WorkloadMetrics[]> {
  const pod = await addonPod(kubeConfig, METRICS_ADDON, request.meshNamespace);
  const forward = await forwardToPod(kubeConfig, { namespace: request.meshNamespace, pod, port: METRICS_ADDON.port });
  try {
    const baseUrl = `http://${forward.address}:${forward.localPort}`;
    return await Promise.all(request.workloads.map(({ label, target }) => workloadMetrics(baseUrl, target, label)));
  } finally {
    await forward.close();
  }
}
