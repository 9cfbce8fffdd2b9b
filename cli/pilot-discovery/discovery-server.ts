import { loggingOptionsFrom, stopSignal, type Settings } from '../../runtime/index.js';
import { newMeshd, type MeshdOptions } from '../../meshd/index.js';
import type { DiscoveryFlags } from './discovery-command.js';

export interface DiscoveryContext {
  settings: Settings<'pilot-discovery'>;
  /** The command line as given (ControlZ shows it). */
  args: readonly string[];
}

/** `pilot-discovery discovery`'s flags as the daemon's options. */
export function meshdOptionsFrom(flags: DiscoveryFlags, context: DiscoveryContext): MeshdOptions {
  return {
    settings: context.settings,
    logging: loggingOptionsFrom(flags),
    args: context.args,
    configDir: flags.configDir,
    kubeConfigPath: flags.orchconfig,
    registries: flags.registries,
    clusterId: flags.clusterID,
    domain: flags.domain,
    resyncMs: flags.resync,
    kubeApiQps: flags.orchApiQPS,
    kubeApiBurst: flags.orchApiBurst,
    meshConfigFile: flags.meshConfig,
    namespace: flags.namespace,
    grpcAddr: flags.grpcAddr,
    secureGrpcAddr: flags.secureGRPCAddr,
    httpAddr: flags.httpAddr,
    httpsAddr: flags.httpsAddr,
    monitoringAddr: flags.monitoringAddr,
    ctrlzAddress: flags.ctrlz_address,
    ctrlzPort: flags.ctrlz_port,
    keepalive: flags,
    shutdownDurationMs: flags.shutdownDuration,
    tlsCipherSuites: flags.tlsCipherSuites,
    tlsCertFile: flags.tlsCertFile,
    tlsKeyFile: flags.tlsKeyFile,
    caCertFile: flags.caCertFile,
    plugins: flags.plugins,
    profile: flags.profile,
  };
}

/** Runs the daemon until the signal aborts (SIGINT or SIGTERM without one). */
export async function runDiscovery(options: MeshdOptions, signal?: AbortSignal): Promise<void> {
  const { manager, logging } = await newMeshd(options);
  const stop = stopSignal(signal);
  try {
    await manager.start(stop.signal);
    logging.scope('default').info('discovery service stopped');
  } finally {
    stop.release();
    await logging.close();
  }
}
