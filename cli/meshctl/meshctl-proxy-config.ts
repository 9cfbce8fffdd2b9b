import { Command, Option } from 'commander';
import { UsageError } from '../../runtime/index.js';
import { boolOption, uint16Flag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

interface PcFlags {
  file?: string;
  fqdn?: string;
  port?: number;
  subset?: string;
  direction?: string;
  address?: string;
  type?: string;
  name?: string;
  cluster?: string;
  status?: string;
  verbose: boolean;
}

type Meshctl = typeof import('../../meshctl/index.js');
type Request = import('../../meshctl/index.js').ProxyConfigRequest;

/** `meshctl proxy-config` (`pc`): a proxy's clusters, endpoints, listeners, routes, secrets, bootstrap and log levels. */
export function newMeshctlProxyConfigCommand(io: CliIo): Command {
  const pc = new Command('proxy-config')
    .alias('pc')
    .description('Retrieve information about proxy configuration from the proxy or a config dump')
    .addOption(new Option('-o, --output <string>', 'Output format: one of json|yaml|short').default('short'));
  const file = (c: Command): Command => c.option('-f, --file <string>', 'Proxy config dump JSON file');
  const port = (c: Command, what: string): Command => c.addOption(new Option('--port <int>', what).argParser(uint16Flag));

  const run =
    (kind: string, request: (flags: PcFlags) => Request, includeEds = false) =>
    async (target: string | undefined, flags: PcFlags, command: Command): Promise<void> => {
      const output = command.optsWithGlobals<{ output: string }>().output;
      if (!['short', 'json', 'yaml'].includes(output)) throw new UsageError(`--output ${output}: want one of json|yaml|short`, { exitCode: 64 });
      const meshctl = await import('../../meshctl/index.js');
      const admin = await adminFor(meshctl, kind, target, flags.file, command, includeEds);
      io.stdout(await meshctl.proxyConfig(admin, request(flags), output as 'short' | 'json' | 'yaml'));
    };

  pc.addCommand(
    port(
      file(
        new Command('cluster')
          .aliases(['clusters', 'c'])
          .argument('[target]')
          .description('Retrieves cluster configuration for the proxy in the specified pod'),
      ),
      'Filter clusters by Port field',
    )
      .option('--fqdn <string>', 'Filter clusters by substring of Service FQDN field')
      .option('--subset <string>', 'Filter clusters by substring of Subset field')
      .option('--direction <string>', 'Filter clusters by Direction field')
      .action(run('cluster', (f) => ({ kind: 'cluster', filter: clusterFilter(f) }))),
  );
  pc.addCommand(
    port(
      file(
        new Command('endpoint')
          .aliases(['endpoints', 'ep'])
          .argument('[target]')
          .description('Retrieves endpoint configuration for the proxy in the specified pod'),
      ),
      'Filter endpoints by Port field',
    )
      .option('--address <string>', 'Filter endpoints by address field')
      .option('--cluster <string>', 'Filter endpoints by cluster name field')
      .option('--status <string>', 'Filter endpoints by status field')
      .action(
        run('endpoint', (f) => ({
          kind: 'endpoint',
          filter: { ...opt('address', f.address), ...opt('port', f.port), ...opt('cluster', f.cluster), ...opt('status', f.status) },
        })),
      ),
  );
  pc.addCommand(
    port(
      file(
        new Command('listener')
          .aliases(['listeners', 'l'])
          .argument('[target]')
          .description('Retrieves listener configuration for the proxy in the specified pod'),
      ),
      'Filter listeners by Port field',
    )
      .option('--address <string>', 'Filter listeners by address field')
      .option('--type <string>', 'Filter listeners by type field')
      .addOption(boolOption('--verbose', 'Output more information', true))
      .action(run('listener', (f) => ({ kind: 'listener', filter: listenerFilter(f), verbose: f.verbose }))),
  );
  pc.addCommand(
    file(new Command('route').aliases(['routes', 'r']).argument('[target]').description('Retrieves route configuration for the proxy in the specified pod'))
      .option('--name <string>', 'Filter routes by route name field')
      .addOption(boolOption('--verbose', 'Output more information', true))
      .action(run('route', (f) => ({ kind: 'route', filter: opt('name', f.name), verbose: f.verbose }))),
  );
  pc.addCommand(
    file(
      new Command('secret').aliases(['secrets', 's']).argument('[target]').description('Retrieves secret configuration for the proxy in the specified pod'),
    ).action(run('secret', () => ({ kind: 'secret' }))),
  );
  pc.addCommand(
    file(new Command('bootstrap').alias('b').argument('[target]').description('Retrieves bootstrap configuration for the proxy in the specified pod')).action(
      run('bootstrap', () => ({ kind: 'bootstrap' })),
    ),
  );
  pc.addCommand(
    port(
      file(new Command('all').alias('a').argument('[target]').description('Retrieves all configuration for the proxy in the specified pod')),
      'Filter clusters and listeners by Port field',
    )
      .option('--address <string>', 'Filter listeners by address field')
      .option('--direction <string>', 'Filter clusters by Direction field')
      .option('--fqdn <string>', 'Filter clusters by substring of Service FQDN field')
      .option('--name <string>', 'Filter listeners by route name field')
      .option('--subset <string>', 'Filter clusters by substring of Subset field')
      .option('--type <string>', 'Filter listeners by type field')
      .addOption(boolOption('--verbose', 'Output more information', true))
      .action(run('all', (f) => ({ kind: 'all', cluster: clusterFilter(f), listener: listenerFilter(f), route: opt('name', f.name), verbose: f.verbose }))),
  );
  pc.addCommand(
    new Command('log')
      .alias('o')
      .argument('[target]')
      .description('Retrieves or sets the logging levels of the proxy in the specified pod')
      .option(
        '--level <string>',
        'Comma-separated minimum per-logger level of messages to output, in the form of [<logger>:]<level>,[<logger>:]<level>,... where logger can be one of admin, aws, assert, backtrace, client, config, connection, conn_handler, dubbo, file, filter, forward_proxy, grpc, hc, health_checker, http, http2, hystrix, init, io, jwt, kafka, lua, main, misc, mongo, quic, pool, rbac, redis, router, runtime, stats, secret, tap, testing, thrift, tracing, upstream, udp, wasm and level can be one of trace, debug, info, warning, error, critical, off',
      )
      .option('-r, --reset', 'Reset levels to default value (warning).', false)
      .option('-l, --selector <string>', 'Label selector')
      .action(async (target: string | undefined, flags: { level?: string; reset: boolean; selector?: string }, command: Command) => {
        const meshctl = await import('../../meshctl/index.js');
        const global = command.optsWithGlobals<MeshctlGlobalFlags>();
        const kubeConfig = await meshctl.loadKubeClient(global);
        const namespace = meshctl.namespaceOf(kubeConfig, global.namespace);
        if ((target === undefined) === (flags.selector === undefined)) throw new UsageError('log requires pod name or --selector', { exitCode: 64 });
        const proxies =
          flags.selector === undefined
            ? [await meshctl.resolveProxyTarget(kubeConfig, target ?? '', namespace, global.meshNamespace)]
            : (await meshctl.podsBySelector(kubeConfig, namespace, flags.selector)).map((pod) => ({ kind: 'pod' as const, ...pod }));
        for (const proxy of proxies) {
          const answer = await meshctl.proxyLog(meshctl.targetAdmin(kubeConfig, proxy, global.meshNamespace), {
            ...(flags.level !== undefined ? { level: flags.level } : {}),
            reset: flags.reset,
            resetLevel: 'warning',
          });
          io.stdout(proxies.length > 1 ? `${meshctl.targetName(proxy)}:\n${answer}` : answer);
        }
      }),
  );
  return pc;
}

function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function clusterFilter(f: PcFlags): { fqdn?: string; port?: number; subset?: string; direction?: string } {
  return { ...opt('fqdn', f.fqdn), ...opt('port', f.port), ...opt('subset', f.subset), ...opt('direction', f.direction) };
}

function listenerFilter(f: PcFlags): { address?: string; port?: number; type?: string } {
  return { ...opt('address', f.address), ...opt('port', f.port), ...opt('type', f.type) };
}

/** A pod through a port-forward, or `-f`: exactly one of them, as the reference requires. */
async function adminFor(meshctl: Meshctl, kind: string, target: string | undefined, file: string | undefined, command: Command, includeEds: boolean) {
  if ((target === undefined) === (file === undefined)) throw new UsageError(`${kind} requires pod name or --file parameter`, { exitCode: 64 });
  if (file !== undefined) return meshctl.fileAdmin(file);
  const global = command.optsWithGlobals<MeshctlGlobalFlags>();
  const kubeConfig = await meshctl.loadKubeClient(global);
  const proxy = await meshctl.resolveProxyTarget(kubeConfig, target ?? '', meshctl.namespaceOf(kubeConfig, global.namespace), global.meshNamespace);
  return meshctl.targetAdmin(kubeConfig, proxy, global.meshNamespace, { includeEds });
}
