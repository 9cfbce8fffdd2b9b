import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig, type V1EnvVar, type V1Pod, type V1Volume } from '@kubernetes/client-node';
import { PROXY_CONTAINER } from '../../names/index.js';

/** What the kubelet would run for a container: its command, arguments and environment, in its folder. */
export interface ContainerLaunch {
  readonly command: readonly string[];
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

/** The proxy container's launch, and the agent's proxy type (its second argument). */
export interface ProxyLaunch extends ContainerLaunch {
  readonly kind: 'sidecar' | 'router';
}

export interface KubeletOptions {
  readonly kubeConfig: KubeConfig;
  /** Issues a projected service-account token, as the kubelet asks the API server for one. */
  readonly issueToken: (namespace: string, serviceAccount: string, audience: string, expirationSeconds: number) => string;
}

/**
 * Plays the kubelet for a pod's injected proxy container, from the pod as the API server stored
 * it: resolves its env (values and field references), expands `$(VAR)` in its arguments, and fills
 * the volumes it mounts (empty folders, the downward API's labels and annotations, the projected
 * service-account token, ConfigMaps) under `podDir` at their mount paths, where the agent, run
 * with `podDir` as its working folder, reads them. Undefined for a pod without a proxy.
 */
export async function prepareProxyContainer(pod: V1Pod, podDir: string, options: KubeletOptions): Promise<ProxyLaunch | undefined> {
  const launch = await prepareContainer(pod, PROXY_CONTAINER, podDir, options);
  if (!launch) return undefined;
  const kind = launch.args[0] === 'proxy' && launch.args[1] === 'router' ? 'router' : 'sidecar';
  return { ...launch, kind };
}

/** Any container of the pod, the same way: env resolved, `$(VAR)` expanded, its volumes filled under `podDir`. */
export async function prepareContainer(pod: V1Pod, containerName: string, podDir: string, options: KubeletOptions): Promise<ContainerLaunch | undefined> {
  const container = pod.spec?.containers.find((c) => c.name === containerName);
  if (!container) return undefined;
  const env = resolveEnv(container.env ?? [], pod);
  const args = (container.args ?? []).map((arg) => expandReferences(arg, env));
  const command = (container.command ?? []).map((arg) => expandReferences(arg, env));
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.spec?.volumes?.find((v) => v.name === mount.name);
    if (volume) await fillVolume(volume, join(podDir, mount.mountPath), pod, options);
  }
  return { command, args, env };
}

function resolveEnv(vars: readonly V1EnvVar[], pod: V1Pod): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of vars) {
    if (variable.value !== undefined) env[variable.name] = expandReferences(variable.value, env);
    else if (variable.valueFrom?.fieldRef) env[variable.name] = fieldOf(pod, variable.valueFrom.fieldRef.fieldPath);
  }
  return env;
}

function fieldOf(pod: V1Pod, path: string): string {
  switch (path) {
    case 'metadata.name':
      return pod.metadata?.name ?? '';
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.podIP':
      return pod.status?.podIP ?? '';
    case 'status.hostIP':
      return pod.status?.hostIP ?? '127.0.0.1';
    default:
      throw new Error(`the local kubelet cannot resolve the field reference ${path}`);
  }
}

/** `$(VAR)` is replaced by an earlier variable's value, `$$(VAR)` escapes it, as the kubelet does. */
function expandReferences(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (match, name: string | undefined) => (name === undefined ? '$' : (env[name] ?? match)));
}

async function fillVolume(volume: V1Volume, dir: string, pod: V1Pod, options: KubeletOptions): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const namespace = pod.metadata?.namespace ?? 'default';
  if (volume.downwardAPI) {
    for (const item of volume.downwardAPI.items ?? []) {
      const field =
        item.fieldRef?.fieldPath === 'metadata.labels'
          ? pod.metadata?.labels
          : item.fieldRef?.fieldPath === 'metadata.annotations'
            ? pod.metadata?.annotations
            : undefined;
      writeFileSync(
        join(dir, item.path),
        Object.entries(field ?? {})
          .map(([key, value]) => `${key}=${JSON.stringify(value)}`)
          .join('\n'),
      );
    }
  }
  for (const source of volume.projected?.sources ?? []) {
    const token = source.serviceAccountToken;
    if (token)
      writeFileSync(
        join(dir, token.path),
        options.issueToken(namespace, pod.spec?.serviceAccountName ?? 'default', token.audience ?? 'api', token.expirationSeconds ?? 3600),
      );
  }
  if (volume.secret) {
    const secret = await options.kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ name: volume.secret.secretName ?? '', namespace })
      .catch((error: unknown) => {
        if (volume.secret?.optional) return undefined;
        throw error;
      });
    for (const [key, value] of Object.entries(secret?.data ?? {})) writeFileSync(join(dir, key), Buffer.from(value, 'base64'));
  }
  if (volume.configMap) {
    const configMap = await options.kubeConfig.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: volume.configMap.name ?? '', namespace });
    for (const [key, value] of Object.entries(configMap.data ?? {})) writeFileSync(join(dir, key), value);
  }
}
