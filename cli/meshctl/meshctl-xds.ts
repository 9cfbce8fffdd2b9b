import { Command, Option } from 'commander';
import type { KubeConfig } from '@kubernetes/client-node';
import { MeshError, type BuildInfo } from '../../runtime/index.js';
import type { MeshctlFlagDefaults } from './meshctl-defaults.js';
import type { XdsAnswers, XdsDeps, XdsQuery } from '../../meshctl/index.js';
import { boolOption } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import { addXdsFlags, xdsQueryOf, type XdsFlags } from './meshctl-xds-flags.js';
import type { CliIo } from '../run-cli.js';
import type { VersionOptions } from '../version-command.js';

/** What `x ps`, `x version` and `x internal-debug` decode: the discovery service and CSDS client configs. */
const XDS_PROTO_FILES = ['envoy/service/discovery/v3/ads.proto', 'envoy/service/status/v3/csds.proto'];

export interface MeshctlXdsDeps {
  readonly io: CliIo;
  readonly defaults: MeshctlFlagDefaults;
  readonly buildInfo: () => BuildInfo;
}

// The Envoy plumbing (gRPC, protobufjs) is imported here, by the commands that speak xDS, not by every start.
async function xdsContext(command: Command): Promise<{
  meshctl: typeof import('../../meshctl/index.js');
  envoy: typeof import('../../xds/envoy/index.js');
  global: MeshctlGlobalFlags;
  query: XdsQuery;
  deps: XdsDeps;
}> {
  const meshctl = await import('../../meshctl/index.js');
  const envoy = await import('../../xds/envoy/index.js');
  const global = command.optsWithGlobals<MeshctlGlobalFlags>();
  const query = xdsQueryOf(command.opts<XdsFlags>(), global.meshNamespace);
  let kubeConfig: Promise<KubeConfig> | undefined;
  const deps: XdsDeps = { protos: envoy.loadEnvoyProtos({ files: XDS_PROTO_FILES }), kubeConfig: () => (kubeConfig ??= meshctl.loadKubeClient(global)) };
  return { meshctl, envoy, global, query, deps };
}

/** Names each daemon that did not answer; fails when none did. */
function reportFailures(io: CliIo, result: XdsAnswers): void {
  for (const [daemon, why] of result.failures) io.stderr(`meshd ${daemon} did not answer: ${why}\n`);
  if (result.answers.size === 0) throw new MeshError('xds-query-failed', 'no meshd instance answered');
}

/** `x proxy-status` (`x ps`): the proxies' sync state over xDS, or one proxy's config against its daemon's. */
function newXdsProxyStatusCommand(deps: MeshctlXdsDeps): Command {
  const command = new Command('proxy-status')
    .alias('ps')
    .argument('[target]', '[<type>/]<name>[.<namespace>] of one proxy')
    .description(
      "Retrieves the synchronization status of each proxy in the mesh from the control plane over xDS, or compares one proxy's config with what the control plane sent it",
    );
  return addXdsFlags(command, deps.defaults).action(async (target: string | undefined, _flags: unknown, self: Command) => {
    const { meshctl, envoy, global, query, deps: xds } = await xdsContext(self);
    if (target === undefined) {
      const result = await meshctl.queryXds(xds, query, { typeUrl: envoy.DEBUG_SYNCZ_TYPE });
      reportFailures(deps.io, result);
      deps.io.stdout(meshctl.statusTable(meshctl.proxiesByControlPlane(xds.protos, result.answers)));
      return;
    }
    const kubeConfig = await xds.kubeConfig();
    const pod = await meshctl.resolvePodTarget(kubeConfig, target, meshctl.namespaceOf(kubeConfig, global.namespace));
    const proxyDump = await meshctl.podAdmin(kubeConfig, pod.namespace, pod.name).configDump();
    const result = await meshctl.queryXds(
      xds,
      { ...query, firstOnly: true },
      { typeUrl: envoy.DEBUG_TYPE, resourceNames: [`config_dump?proxyID=${pod.name}.${pod.namespace}`] },
    );
    reportFailures(deps.io, result);
    const [daemon, response] = [...result.answers][0] ?? [];
    if (daemon === undefined || response === undefined) throw new MeshError('xds-query-failed', 'no meshd instance answered');
    const body = meshctl.debugBody(response);
    const problem = (body as { error?: unknown } | null)?.error;
    if (typeof problem === 'string') throw new MeshError('xds-query-failed', `meshd ${daemon}: ${problem} (${pod.name}.${pod.namespace})`);
    deps.io.stdout(meshctl.compareConfigDumps(meshctl.parseConfigDump(JSON.stringify(body), `the config meshd ${daemon} sent`), proxyDump));
  });
}

/** `x version`: the client's version, each daemon's from its identifier, the proxies' grouped. */
function newXdsVersionCommand(deps: MeshctlXdsDeps): Command {
  // The reference's version defaults to --short=true.
  const command = new Command('version')
    .description('Prints out build version information, of the control plane and the proxies over xDS')
    .addOption(new Option('-o, --output <format>', "One of 'yaml' or 'json'.").choices(['yaml', 'json']))
    .addOption(boolOption('-s, --short', 'Use --short=false to generate full version information', true))
    .addOption(boolOption('--remote', 'Use --remote=false to suppress control plane check', true));
  return addXdsFlags(command, deps.defaults).action(async (flags: VersionOptions & { remote: boolean }, self: Command) => {
    const client = deps.buildInfo();
    const { meshctl, envoy, query, deps: xds } = await xdsContext(self);
    let answers: XdsAnswers['answers'] | undefined;
    if (flags.remote) {
      const result = await meshctl.queryXds(xds, query, { typeUrl: envoy.DEBUG_SYNCZ_TYPE });
      reportFailures(deps.io, result);
      answers = result.answers;
    }
    const report = meshctl.buildXdsVersionReport(xds.protos, client, answers, query.revision);
    deps.io.stdout(meshctl.renderXdsVersion(report, { short: flags.short, ...(flags.output ? { output: flags.output } : {}) }));
  });
}

/** `x internal-debug <type> [<pod>]`: one of the daemon's debug views over xDS. */
function newXdsInternalDebugCommand(deps: MeshctlXdsDeps): Command {
  const command = new Command('internal-debug')
    .argument('<type>', 'the debug view: syncz, adsz, push_status, config_dump?proxyID=<pod>.<namespace>')
    .argument('[target]', 'a pod whose service account authenticates the request ([<type>/]<name>[.<namespace>])')
    .description('Retrieves the debug information of the control plane over xDS')
    .option('--all', 'Send the same request to all instances of the control plane', false)
    .addHelpText(
      'after',
      '\nExamples:\n  meshctl x internal-debug syncz\n  meshctl x internal-debug --all adsz\n  meshctl x internal-debug config_dump?proxyID=productpage-v1-1.default productpage-v1-1.default\n',
    );
  return addXdsFlags(command, deps.defaults).action(async (type: string, target: string | undefined, flags: { all: boolean }, self: Command) => {
    const { meshctl, envoy, global, query, deps: xds } = await xdsContext(self);
    let tokenSubject: XdsQuery['tokenSubject'];
    if (target !== undefined) {
      const kubeConfig = await xds.kubeConfig();
      const pod = await meshctl.resolvePodTarget(kubeConfig, target, meshctl.namespaceOf(kubeConfig, global.namespace));
      tokenSubject = { namespace: pod.namespace, serviceAccount: pod.pod.spec?.serviceAccountName || 'default' };
    }
    const result = await meshctl.queryXds(
      xds,
      { ...query, firstOnly: !flags.all, ...(tokenSubject ? { tokenSubject } : {}) },
      { typeUrl: envoy.DEBUG_TYPE, resourceNames: [type] },
    );
    if (result.answers.size === 0) {
      const hint = [...result.failures.values()].map(meshctl.internalDebugHint).find((h) => h !== undefined);
      if (hint) {
        for (const [daemon, why] of result.failures) deps.io.stderr(`meshd ${daemon}: ${why}\n`);
        throw new MeshError('xds-query-failed', hint);
      }
    }
    reportFailures(deps.io, result);
    deps.io.stdout(meshctl.renderInternalDebug(result.answers, flags.all));
  });
}

/** The XDS group of `meshctl x`. */
export function newMeshctlXdsCommands(deps: MeshctlXdsDeps): Command[] {
  return [newXdsProxyStatusCommand(deps), newXdsVersionCommand(deps), newXdsInternalDebugCommand(deps)];
}
