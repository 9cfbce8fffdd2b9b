import { connect } from 'node:net';
import { MeshError } from '../../runtime/index.js';

/** One rewritten probe of MESH_ORCH_APP_PROBERS: the kubelet asks the agent, the agent asks the app. */
export interface AppProbe {
  readonly httpGet?: {
    readonly path?: string;
    readonly port: number;
    readonly scheme?: string;
    readonly httpHeaders?: readonly { name: string; value: string }[];
  };
  readonly tcpSocket?: { readonly port: number };
  readonly timeoutSeconds?: number;
}

export class AppProbersError extends MeshError<'app-probers-invalid'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('app-probers-invalid', message, options);
  }
}

/** Parses MESH_ORCH_APP_PROBERS: a JSON map from the status-port path (`/app-health/<container>/livez`) to a probe. */
export function parseAppProbers(text: string): ReadonlyMap<string, AppProbe> {
  if (text.trim() === '') return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AppProbersError('MESH_ORCH_APP_PROBERS is not JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new AppProbersError('MESH_ORCH_APP_PROBERS must map paths to probes');
  const probes = new Map<string, AppProbe>();
  for (const [path, probe] of Object.entries(parsed as Record<string, AppProbe>)) {
    if (!path.startsWith('/app-health/')) throw new AppProbersError(`MESH_ORCH_APP_PROBERS: "${path}" must start with /app-health/`);
    if (!probe?.httpGet?.port && !probe?.tcpSocket?.port) throw new AppProbersError(`MESH_ORCH_APP_PROBERS["${path}"]: needs httpGet.port or tcpSocket.port`);
    probes.set(path, probe);
  }
  return probes;
}

/** Runs a probe against the app at `host`: the HTTP status, 200 for an open TCP port, 503 when it fails or times out. */
export async function runAppProbe(probe: AppProbe, host: string): Promise<number> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.httpGet) {
    const scheme = (probe.httpGet.scheme ?? 'HTTP').toLowerCase();
    const headers = Object.fromEntries((probe.httpGet.httpHeaders ?? []).map((header) => [header.name, header.value]));
    try {
      const response = await fetch(`${scheme}://${host}:${probe.httpGet.port}${probe.httpGet.path ?? '/'}`, {
        headers,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.arrayBuffer();
      return response.status;
    } catch {
      return 503;
    }
  }
  const port = probe.tcpSocket?.port ?? 0;
  return new Promise<number>((resolve) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(503);
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.end();
      resolve(200);
    });
    socket.once('error', () => {
      clearTimeout(timer);
      resolve(503);
    });
  });
}
