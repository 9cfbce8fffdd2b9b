import { Command } from 'commander';
import { loggingOptionsFrom, stopSignal, UsageError, type Settings } from '../../runtime/index.js';
import { newAgent, type AgentOptions } from '../../agent/index.js';
import { intFlag } from '../flags.js';
import type { CliIo } from '../run-cli.js';

interface ProxyFlags {
  concurrency: number;
  domain: string;
  meshConfig: string;
  outlierLogPath: string;
  proxyComponentLogLevel: string;
  proxyLogLevel: string;
  serviceCluster: string;
  stsPort: number;
  templateFile: string;
  tokenManagerPlugin: string;
  [logFlag: `log_${string}`]: unknown;
}

export interface ProxyCommandDeps {
  settings: Settings<'pilot-agent'>;
  /** Stops the agent; SIGINT and SIGTERM when absent. */
  signal?: AbortSignal;
}

/** `pilot-agent proxy`'s flags as the agent's options. */
function agentOptionsFrom(type: AgentOptions['type'], flags: ProxyFlags, settings: Settings<'pilot-agent'>): AgentOptions {
  return {
    type,
    settings,
    logging: loggingOptionsFrom(flags),
    concurrency: flags.concurrency,
    domain: flags.domain,
    meshConfigFile: flags.meshConfig,
    proxyLogLevel: flags.proxyLogLevel,
    proxyComponentLogLevel: flags.proxyComponentLogLevel,
    serviceCluster: flags.serviceCluster,
    templateFile: flags.templateFile,
  };
}

/** Runs the agent beside one proxy until the signal: identity, certificates over SDS, the data plane, readiness. */
async function runProxy(options: AgentOptions, deps: ProxyCommandDeps, io: CliIo): Promise<void> {
  const { manager, logging } = await newAgent(options);
  const stop = stopSignal(deps.signal);
  try {
    await manager.start(stop.signal);
  } finally {
    stop.release();
    io.stdout('proxy agent stopped\n');
    await logging.close();
  }
}

export function newProxyCommand(io: CliIo, deps: () => ProxyCommandDeps): Command {
  const command = new Command('proxy')
    .description('XDS proxy agent')
    .argument('[type]', 'sidecar or router', 'sidecar')
    .option('--concurrency <int>', 'number of worker threads to run', intFlag, 0)
    .option('--domain <string>', 'DNS domain suffix. If not provided uses ${POD_NAMESPACE}.svc.cluster.local', '')
    .option(
      '--meshConfig <string>',
      'File name for mesh configuration. If not specified, a default mesh will be used. This may be overridden by PROXY_CONFIG environment variable or proxy.mesh.io/config annotation.',
      './etc/mesh/config/mesh',
    )
    .option('--outlierLogPath <string>', 'The log path for outlier detection', '')
    .option('--proxyComponentLogLevel <string>', 'The component log level used to start the Envoy proxy. Deprecated, use proxyLogLevel instead', '')
    .option(
      '--proxyLogLevel <string>',
      "The log level used to start the Envoy proxy (choose from {trace, debug, info, warning, error, critical, off}). Level may also include one or more scopes, such as 'info,misc:error,upstream:debug'",
      'warning,misc:error',
    )
    .option('--serviceCluster <string>', 'Service cluster', 'mesh-proxy')
    .option('--stsPort <int>', 'HTTP Port on which to serve Security Token Service (STS). If zero, STS service will not be provided.', intFlag, 0)
    .option('--templateFile <string>', 'Go template bootstrap config', '')
    .option('--tokenManagerPlugin <string>', 'Token provider specific plugin name.', 'CloudTokenExchange')
    .action(async (type: string, flags: ProxyFlags) => {
      if (type !== 'sidecar' && type !== 'router') throw new UsageError(`proxy type must be sidecar or router, got "${type}"`);
      const current = deps();
      await runProxy(agentOptionsFrom(type, flags, current.settings), current, io);
    });
  return command;
}
