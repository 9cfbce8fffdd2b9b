import { randomUUID } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { LABELS } from '../../names/index.js';
import { MeshError, errorMessage, formatDuration } from '../../runtime/index.js';
import { jsonToStruct, newDiscoveryClient, type DiscoveryResponse, type EnvoyProtos } from '../../xds/envoy/index.js';
import { forwardToPod } from '../kube/port-forward.js';
import { defaultAuthority, requestXdsToken, xdsChannel, type TokenSubject, type XdsChannel, type XdsSecurity } from './xds-credentials.js';

/** The daemon's xDS port (TLS, tokens and the CA). */
export const DAEMON_XDS_PORT = 15012;

/** Which daemons to ask and how: the XDS flag group. */
export interface XdsQuery {
  readonly meshNamespace: string;
  /** `-r/--revision`: only that revision's daemons ('' for all). */
  readonly revision: string;
  /** `--xds-label`: the daemon pods' label selector. */
  readonly xdsLabel: string;
  /** `--xds-port`: the daemon pods' port to forward to. */
  readonly xdsPort: number;
  /** `--xds-address`: one daemon dialled directly, without looking for pods ('' to look). */
  readonly xdsAddress: string;
  /** `--timeout`: each daemon's own deadline. */
  readonly timeoutMs: number;
  readonly security: XdsSecurity;
  /** Whose token the streams carry: default the `default` account of the mesh namespace. */
  readonly tokenSubject?: TokenSubject;
  /** Only the first daemon (by pod name). */
  readonly firstOnly?: boolean;
}

/** One DiscoveryRequest. */
export interface XdsRequest {
  readonly typeUrl: string;
  readonly resourceNames?: readonly string[];
}

/** A daemon's response, with who it says it is. */
export interface XdsResponse extends DiscoveryResponse {
  control_plane?: { identifier?: string } | null;
}

export interface XdsAnswers {
  /** By daemon (pod name, or the `--xds-address`), the responses of those that answered. */
  readonly answers: ReadonlyMap<string, XdsResponse>;
  /** The daemons that did not, each with why. */
  readonly failures: ReadonlyMap<string, string>;
}

export interface XdsDeps {
  readonly protos: EnvoyProtos;
  /** The orchestrator client, loaded only when needed (pods, tokens). */
  readonly kubeConfig: () => Promise<KubeConfig>;
}

interface Target {
  readonly name: string;
  dial(onPodError: (message: string) => void): Promise<{ address: string; close(): Promise<void> }>;
}

async function daemonTargets(deps: XdsDeps, query: XdsQuery): Promise<Target[]> {
  if (query.xdsAddress !== '') return [{ name: query.xdsAddress, dial: () => Promise.resolve({ address: query.xdsAddress, close: () => Promise.resolve() }) }];
  const kubeConfig = await deps.kubeConfig();
  const { CoreV1Api } = await import('@kubernetes/client-node');
  const selector = [query.xdsLabel, ...(query.revision !== '' ? [`${LABELS.revision}=${query.revision}`] : [])].filter((s) => s !== '').join(',');
  const pods = (
    await kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: query.meshNamespace, labelSelector: selector, fieldSelector: 'status.phase=Running' })
  ).items;
  const names = pods.map((pod) => pod.metadata?.name ?? '').sort();
  if (names.length === 0)
    throw new MeshError('pod-not-found', `unable to find any meshd instances (running pods labelled ${selector} in namespace ${query.meshNamespace})`);
  return (query.firstOnly ? names.slice(0, 1) : names).map((name) => ({
    name,
    dial: async (onPodError) => {
      const forward = await forwardToPod(kubeConfig, {
        namespace: query.meshNamespace,
        pod: name,
        port: query.xdsPort,
        onError: (error) => onPodError(error.message),
      });
      return { address: `${forward.address}:${forward.localPort}`, close: () => forward.close() };
    },
  }));
}

/** The node of meshctl's streams: in the token's namespace, so the daemon's identity check holds. */
function meshctlNode(query: XdsQuery): object {
  const namespace = query.tokenSubject?.namespace ?? query.meshNamespace;
  return {
    id: `sidecar~127.0.0.1~meshctl-${randomUUID().slice(0, 8)}.${namespace}~${namespace}.svc.cluster.local`,
    metadata: jsonToStruct({ NAMESPACE: namespace, GENERATOR: 'event', ...(query.tokenSubject ? { SERVICE_ACCOUNT: query.tokenSubject.serviceAccount } : {}) }),
  };
}

/** One request on one daemon's stream; the first response, or why there was none within the timeout. */
async function askOne(deps: XdsDeps, query: XdsQuery, target: Target, channel: XdsChannel, request: XdsRequest): Promise<XdsResponse> {
  let podSide = '';
  let timer: NodeJS.Timeout | undefined;
  let close: (() => Promise<void>) | undefined;
  let closeClient: (() => void) | undefined;
  try {
    return await Promise.race([
      (async () => {
        const dialled = await target.dial((message) => (podSide ||= message));
        close = dialled.close;
        return await new Promise<XdsResponse>((resolve, reject) => {
          const client = newDiscoveryClient({
            protos: deps.protos,
            target: dialled.address,
            credentials: channel.credentials,
            channelOptions: channel.channelOptions,
            metadata: () => channel.metadata,
            node: meshctlNode(query),
            initial: [[request.typeUrl, request.resourceNames ?? []]],
            onResponse: (response) => resolve(response as XdsResponse),
            onStreamEnd: (end) => reject(new Error(podSide || end.reason)),
          });
          closeClient = () => client.close();
          client.start();
        });
      })(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${formatDuration(query.timeoutMs)}${podSide ? ` (${podSide})` : ''}`)), query.timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    closeClient?.();
    await close?.();
  }
}

/**
 * Sends one DiscoveryRequest to every daemon (the running pods of `--xds-label`, each through a
 * port-forward to `--xds-port`, or the one `--xds-address`) in parallel, each bounded by its own
 * timeout: one unreachable daemon costs its own timeout, and the others' answers are returned.
 */
export async function queryXds(deps: XdsDeps, query: XdsQuery, request: XdsRequest): Promise<XdsAnswers> {
  const targets = await daemonTargets(deps, query);
  const subject = query.tokenSubject ?? { namespace: query.meshNamespace, serviceAccount: 'default' };
  const authority = query.security.authority || defaultAuthority(query.meshNamespace, query.revision);
  const channel = await xdsChannel(query.security, authority, async () => requestXdsToken(await deps.kubeConfig(), subject));
  const answers = new Map<string, XdsResponse>();
  const failures = new Map<string, string>();
  await Promise.all(
    targets.map(async (target) => {
      try {
        answers.set(target.name, await askOne(deps, query, target, channel, request));
      } catch (error) {
        failures.set(target.name, errorMessage(error));
      }
    }),
  );
  return { answers: new Map([...answers].sort(([a], [b]) => a.localeCompare(b))), failures };
}
