import type { LoggingOptions, Settings } from '../runtime/index.js';

/**
 * Everything the daemon is assembled from, typed: the command line maps its flags here (cli/),
 * tests and the local mesh build it directly.
 */
export interface MeshdOptions {
  readonly settings: Settings<'pilot-discovery'>;
  readonly logging: Partial<LoggingOptions>;
  /** The command line as given, shown by ControlZ. */
  readonly args: readonly string[];
  /** `--configDir`: the mesh kinds (and, without an orchestrator, everything) from a folder; '' for none. */
  readonly configDir: string;
  /** `--orchconfig`; '' lets client-node look (KUBECONFIG, in-cluster) when there is no config folder. */
  readonly kubeConfigPath: string;
  readonly registries: readonly string[];
  readonly clusterId: string;
  readonly domain: string;
  readonly resyncMs: number;
  readonly kubeApiQps: number;
  readonly kubeApiBurst: number;
  readonly meshConfigFile: string;
  /** `--namespace`: the daemon's own namespace, the mesh's root namespace. */
  readonly namespace: string;
  readonly grpcAddr: string;
  readonly secureGrpcAddr: string;
  readonly httpAddr: string;
  /** `--httpsAddr`: the admission webhooks. */
  readonly httpsAddr: string;
  readonly monitoringAddr: string;
  readonly ctrlzAddress: string;
  readonly ctrlzPort: number;
  readonly keepalive: { keepaliveInterval: number; keepaliveTimeout: number; keepaliveMaxServerConnectionAge: number };
  readonly shutdownDurationMs: number;
  readonly tlsCipherSuites: readonly string[];
  /** `--tlsCertFile` and `--tlsKeyFile` (together), `--caCertFile`; '' for none. */
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly caCertFile: string;
  /** `--plugins`: the security filters generated (`ext_authz`, `authn`, `authz`); all of them when absent. */
  readonly plugins?: readonly string[];
  /** `--profile`: CPU profiles and heap snapshots under `/debug/pprof/` on the debug ports. */
  readonly profile?: boolean;
  /** How often those files are read again (in-process runs that change them); one minute otherwise. */
  readonly tlsFilesRefreshMs?: number;
  /** Lease timings of the leader election (in-process runs that need a short lease); client-go's defaults otherwise. */
  readonly leaderElectionTimings?: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number };
}
