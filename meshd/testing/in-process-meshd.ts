/**
 * Test support: the daemon assembled in the test's own process from `MeshdOptions` built here, not
 * from a command line. Every listener is on loopback (port 0 unless given); the rest are the
 * command line's defaults.
 */
import { parseDuration, type Settings } from '../../runtime/index.js';
import { newMeshd } from '../meshd.js';
import type { MeshdOptions } from '../options.js';

/** Go's max duration, the default of `--keepaliveMaxServerConnectionAge`. */
const MAX_CONNECTION_AGE_MS = parseDuration('2562047h47m16.854775807s');

export function meshdTestOptions(settings: Settings<'pilot-discovery'>, overrides: Partial<MeshdOptions> = {}): MeshdOptions {
  return {
    settings,
    logging: {},
    args: [],
    configDir: '',
    kubeConfigPath: '',
    registries: ['orch'],
    clusterId: 'Kubernetes',
    domain: 'cluster.local',
    resyncMs: 60_000,
    kubeApiQps: 80,
    kubeApiBurst: 160,
    meshConfigFile: './etc/mesh/config/mesh',
    namespace: 'mesh-system',
    grpcAddr: '127.0.0.1:0',
    secureGrpcAddr: '127.0.0.1:0',
    httpAddr: '127.0.0.1:0',
    httpsAddr: '127.0.0.1:0',
    monitoringAddr: '127.0.0.1:0',
    ctrlzAddress: '127.0.0.1',
    ctrlzPort: 0,
    keepalive: { keepaliveInterval: 30_000, keepaliveTimeout: 10_000, keepaliveMaxServerConnectionAge: MAX_CONNECTION_AGE_MS },
    shutdownDurationMs: 10_000,
    tlsCipherSuites: [],
    tlsCertFile: '',
    tlsKeyFile: '',
    caCertFile: '',
    ...overrides,
  };
}

/** A file the daemon logs to (as `--log_target <file>`), in the console format or as JSON. */
export function loggingTo(file: string, asJson = false): MeshdOptions['logging'] {
  return { targets: [file], asJson };
}

export interface InProcessMeshd {
  /** Settles when the daemon has stopped: undefined, or what its start-up threw. */
  readonly done: Promise<unknown>;
  /** Stops the daemon and waits for it. */
  stop(): Promise<unknown>;
}

/** Assembles and starts the daemon; a start-up failure settles `done` with the error. */
export function startMeshdInProcess(options: MeshdOptions): InProcessMeshd {
  const abort = new AbortController();
  const done = (async () => {
    const { manager, logging } = await newMeshd(options);
    try {
      await manager.start(abort.signal);
    } finally {
      await logging.close();
    }
  })().then(
    () => undefined,
    (error: unknown) => error,
  );
  return {
    done,
    stop: async () => {
      abort.abort();
      return done;
    },
  };
}
