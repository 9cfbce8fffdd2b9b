import { Command, Option } from 'commander';
import { stopSignal, UsageError } from '../../runtime/index.js';
import { boolOption, uint16Flag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

type Meshctl = typeof import('../../meshctl/index.js');
type Addon = import('../../meshctl/index.js').Addon;

/** The six add-on UIs (the seed's neutral names), with the labels and ports of the reference's add-on charts. */
const ADDON_COMMANDS: readonly Addon[] = [
  { command: 'metrics-store', title: 'metrics store', selector: 'app=prometheus', port: 9090, path: '' },
  { command: 'dashboards', title: 'dashboards', selector: 'app=grafana', port: 3000, path: '' },
  { command: 'service-graph', title: 'service graph', selector: 'app=kiali', port: 20001, path: '/kiali' },
  { command: 'tracing', title: 'tracing', selector: 'app=jaeger', port: 16686, path: '' },
  { command: 'tracing-zipkin', title: 'tracing (zipkin)', selector: 'app=zipkin', port: 9411, path: '' },
  { command: 'tracing-skywalking', title: 'tracing (skywalking)', selector: 'app=skywalking-ui', port: 8080, path: '' },
];

interface DashboardFlags extends MeshctlGlobalFlags {
  address: string;
  port: number;
  browser: boolean;
  selector?: string;
  ctrlz_port?: number;
}

export interface DashboardDeps {
  /** Opens the URL in a browser; the system's (xdg-open, open) by default. */
  readonly opener?: (url: string) => Promise<void>;
  /** What ends the forwarding; SIGINT or SIGTERM of the process by default. */
  readonly stop?: AbortSignal;
}

/** `meshctl dashboard` (`dash`, `d`): port-forwards to a web UI, prints its URL, opens a browser, and waits for Ctrl-C. */
export function newMeshctlDashboardCommand(io: CliIo, deps: DashboardDeps = {}): Command {
  const dashboard = new Command('dashboard')
    .aliases(['dash', 'd'])
    .description('Access to mesh web UIs')
    .option(
      '--address <string>',
      'Address to listen on. Only accepts IP address or localhost as a value. When localhost is supplied, meshctl will try to bind on both 127.0.0.1 and ::1 and will fail if neither of these address are available to bind.',
      'localhost',
    )
    .addOption(new Option('-p, --port <int>', 'Local port to listen to').argParser(uint16Flag).default(0))
    .addOption(
      boolOption(
        '--browser',
        'When --browser is supplied as false, meshctl will not open the browser. Default value is true which means meshctl will always open a browser to view the dashboard.',
        true,
      ),
    );

  const forward = async (meshctl: Meshctl, flags: DashboardFlags, namespace: string, pod: string, remotePort: number, urlPath: string): Promise<void> => {
    const kubeConfig = await meshctl.loadKubeClient(flags);
    const signals = deps.stop ? { signal: deps.stop, release: () => undefined } : stopSignal(undefined);
    try {
      await meshctl.openDashboard(kubeConfig, {
        namespace,
        pod,
        remotePort,
        urlPath,
        address: flags.address,
        localPort: flags.port,
        browser: flags.browser,
        opener: deps.opener ?? meshctl.systemBrowserOpener(),
        out: io.stdout,
        until: signals.signal,
      });
    } finally {
      signals.release();
    }
  };

  /** A pod by name (`[<type>/]<name>[.<namespace>]`) or the first one `-l` picks, never both. */
  const podTarget =
    (remotePort: (flags: DashboardFlags) => number, namespaceOf: (flags: DashboardFlags) => string) =>
    async (target: string | undefined, _options: unknown, command: Command): Promise<void> => {
      const flags = command.optsWithGlobals<DashboardFlags>();
      if (target === undefined && flags.selector === undefined) throw new UsageError('specify a pod or --selector', { exitCode: 64 });
      if (target !== undefined && flags.selector !== undefined) throw new UsageError('name cannot be provided when a selector is specified', { exitCode: 64 });
      const meshctl = await import('../../meshctl/index.js');
      const kubeConfig = await meshctl.loadKubeClient(flags);
      const namespace = namespaceOf(flags);
      let pod: { name: string; namespace: string };
      if (flags.selector !== undefined) {
        const pods = await meshctl.podsBySelector(kubeConfig, namespace, flags.selector);
        pod = pods[0] as { name: string; namespace: string };
        if (pods.length > 1) io.stderr(`more than 1 pods fits selector: ${flags.selector}; will use pod: ${pod.name}\n`);
      } else pod = await meshctl.resolvePodTarget(kubeConfig, target ?? '', namespace);
      await forward(meshctl, flags, pod.namespace, pod.name, remotePort(flags), '');
    };

  dashboard.addCommand(
    new Command('controlz')
      .argument('[target]', '[<type>/]<name>[.<namespace>] of a daemon pod')
      .description('Open ControlZ web UI')
      .option('-l, --selector <string>', 'Label selector')
      .addOption(new Option('--ctrlz_port <int>', 'ControlZ port').argParser(uint16Flag).default(9876))
      .action(
        podTarget(
          (flags) => flags.ctrlz_port ?? 9876,
          (flags) => flags.meshNamespace,
        ),
      ),
  );
  dashboard.addCommand(
    new Command('proxy')
      .argument('[target]', '[<type>/]<name>[.<namespace>] of a pod with a proxy')
      .description('Open the proxy admin dashboard')
      .option('-l, --selector <string>', 'Label selector')
      .action(
        podTarget(
          () => 15000,
          (flags) => flags.namespace || flags.meshNamespace,
        ),
      ),
  );
  for (const addon of ADDON_COMMANDS) {
    dashboard.addCommand(
      new Command(addon.command)
        .description(`Open the ${addon.title} web UI (pods labelled ${addon.selector}, port ${addon.port})`)
        .action(async (_options: unknown, command: Command) => {
          const flags = command.optsWithGlobals<DashboardFlags>();
          const meshctl = await import('../../meshctl/index.js');
          const namespace = flags.namespace || flags.meshNamespace;
          const pod = await meshctl.addonPod(await meshctl.loadKubeClient(flags), addon, namespace);
          await forward(meshctl, flags, namespace, pod, addon.port, addon.path);
        }),
    );
  }
  return dashboard;
}
