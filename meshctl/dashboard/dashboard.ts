import type { KubeConfig } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { MeshError, errorMessage, untilAborted } from '../../runtime/index.js';
import { podsBySelector } from '../kube/pod-target.js';
import { forwardToPod, type PodForward } from '../kube/port-forward.js';

/** An add-on web UI `dashboard` opens: found by its pod label in the mesh namespace. */
export interface Addon {
  /** The subcommand (the seed's neutral names). */
  readonly command: string;
  /** How errors and help name it. */
  readonly title: string;
  readonly selector: string;
  readonly port: number;
  /** Appended to the URL (`/kiali`). */
  readonly path: string;
}

/** Opens a URL in the user's browser; injected so tests never launch one. */
export type BrowserOpener = (url: string) => Promise<void>;

export interface DashboardRequest {
  readonly namespace: string;
  readonly pod: string;
  /** The pod's port. */
  readonly remotePort: number;
  /** `--address`, where the local end listens and what the URL names. */
  readonly address: string;
  /** `-p/--port`; 0 prefers the remote port number, then any free port. */
  readonly localPort: number;
  readonly urlPath: string;
  /** `--browser`. */
  readonly browser: boolean;
  readonly opener: BrowserOpener;
  readonly out: (text: string) => void;
  /** Aborted on SIGINT or SIGTERM: the forward is closed and the call returns. */
  readonly until: AbortSignal;
}

/**
 * The reference's dashboard port-forward: listen on `--port` (or the remote port number, else a
 * free one), print the URL, open it unless `--browser=false` (`skipping opening a browser`), and
 * keep forwarding until the signal aborts.
 */
export async function openDashboard(kubeConfig: KubeConfig, request: DashboardRequest): Promise<void> {
  const preferences = request.localPort !== 0 ? [request.localPort] : [request.remotePort, 0];
  let forward: PodForward | undefined;
  let lastError: unknown;
  for (const localPort of preferences) {
    try {
      forward = await forwardToPod(kubeConfig, {
        namespace: request.namespace,
        pod: request.pod,
        port: request.remotePort,
        address: request.address,
        localPort,
      });
      break;
    } catch (error) {
      lastError = error;
    }
  }
  if (forward === undefined) throw lastError;
  try {
    const url = `http://${request.address}:${forward.localPort}${request.urlPath}`;
    request.out(`${url}\n`);
    if (!request.browser) request.out('skipping opening a browser\n');
    else await request.opener(url).catch(() => request.out(`Failed to open browser; open ${url} in your browser.\n`));
    await untilAborted(request.until);
  } finally {
    await forward.close();
  }
}

/** The first running pod an add-on's label picks in `namespace`; the error names both. */
export async function addonPod(kubeConfig: KubeConfig, addon: Addon, namespace: string): Promise<string> {
  try {
    const [first] = await podsBySelector(kubeConfig, namespace, addon.selector);
    if (first) return first.name;
  } catch (error) {
    throw new MeshError('pod-not-found', `not able to locate ${addon.title} pod: ${errorMessage(error)}; is the add-on installed?`, { cause: error });
  }
  throw new MeshError('pod-not-found', `no ${addon.title} pods found (label ${addon.selector}, namespace ${namespace})`);
}

/** `xdg-open` (Linux), `open` (macOS) or `rundll32` (Windows), detached from meshctl. */
export function systemBrowserOpener(platform: NodeJS.Platform = process.platform): BrowserOpener {
  const [command, ...args] = platform === 'darwin' ? ['open'] : platform === 'win32' ? ['rundll32', 'url.dll,FileProtocolHandler'] : ['xdg-open'];
  return (url) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(command ?? 'xdg-open', [...args, url], { detached: true, stdio: 'ignore' });
      child.once('error', reject);
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
    });
}
