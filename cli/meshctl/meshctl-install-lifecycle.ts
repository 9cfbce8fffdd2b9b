import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { INSTALLED_VERSION_ANNOTATION } from '../../names/index.js';
import { MeshError, UsageError, readBuildInfo } from '../../runtime/index.js';
import { durationFlag, stringArrayFlag, stringSliceFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import { chartsOption, forceOf, groupDryRun, loadInstall, manifestsOf, manifestsOption, type ManifestFlags } from './meshctl-manifests-flags.js';
import type { CliIo } from '../run-cli.js';

interface InstallFlags extends ManifestFlags {
  dryRun: boolean;
  force: boolean;
  readinessTimeout: number;
  skipConfirmation: boolean;
  verify: boolean;
}

const installGroup = (command: Command): Command =>
  command
    .addOption(
      new Option('-f, --filename <stringSlice>', 'Path to file containing MeshOperator custom resource; overlays are applied left to right').argParser(
        stringSliceFlag,
      ),
    )
    .addOption(
      new Option(
        '-s, --set <stringArray>',
        'Override a MeshOperator value, e.g. to choose a profile (--set profile=demo); dots in names escaped with a backslash',
      ).argParser(stringArrayFlag),
    )
    .option('-r, --revision <string>', 'Target control plane revision for the command', '')
    .addOption(manifestsOption())
    .addOption(chartsOption())
    .option('--dry-run', 'Console/log output only, make no changes', false)
    .option('--force', 'Proceed even with validation errors', false)
    .addOption(
      new Option('--readiness-timeout <duration>', 'Maximum time to wait for mesh resources in each component to be ready')
        .argParser(durationFlag)
        .default(5 * 60_000, '5m0s'),
    )
    .option('-y, --skip-confirmation', 'The skipConfirmation determines whether the user is prompted for confirmation', false)
    .option('--verify', 'Verify the mesh control plane after installation', false);

/** `meshctl install` (`apply`) and `manifest install`: render, confirm, apply in order, wait, prune, record. */
export function newMeshctlInstallCommand(io: CliIo, readLine: () => Promise<string>, name = 'install'): Command {
  const command = new Command(name).description('Applies a mesh manifest, installing or reconfiguring the mesh on a cluster');
  if (name === 'install') command.alias('apply');
  return installGroup(command).action(async (installFlags: InstallFlags, cmd: Command) => {
    const flags = { ...installFlags, dryRun: installFlags.dryRun || groupDryRun(cmd) };
    const global = cmd.optsWithGlobals<MeshctlGlobalFlags>();
    const { applyInstallation, buildOperatorConfig, clusterObjectsOf, loadKubeClient, renderInstallation, verifyInstallation, COMPONENT_TITLES } =
      await loadInstall();
    const config = buildOperatorConfig({
      manifestsDir: manifestsOf(flags),
      files: flags.filename ?? [],
      sets: flags.set ?? [],
      revision: flags.revision,
      ...forceOf(io, flags.force),
    });
    const rendered = await renderInstallation(config, { manifestsDir: manifestsOf(flags), components: [] });
    if (!flags.skipConfirmation && !flags.dryRun) {
      const titles = rendered.map((r) => `"${COMPONENT_TITLES[r.component]}"`);
      io.stdout(
        `This will install the Mesh ${String(config.spec?.tag ?? '')} ${config.spec?.profile ?? 'default'} profile with [${[...new Set(titles)].join(' ')}] components into the cluster. Proceed? (y/N) `,
      );
      if (!/^y(es)?$/i.test((await readLine()).trim())) {
        io.stdout('Cancelled.\n');
        return;
      }
    }
    const cluster = clusterObjectsOf(await loadKubeClient(global));
    await applyInstallation({
      cluster,
      rendered,
      config,
      dryRun: flags.dryRun,
      readinessTimeoutMs: flags.readinessTimeout,
      version: readBuildInfo().version,
      progress: (line) => io.stdout(`${line}\n`),
    });
    if (flags.verify && !flags.dryRun) await reportVerification(io, verifyInstallation, cluster, rendered);
  });
}

/**
 * `meshctl upgrade`: the installed configuration (its record) with the new `-f`/`--set` over it,
 * checked for eligibility (no downgrade, one minor version at a time, unless `--force`), its
 * changes shown and confirmed, then installed, and with `--verify` verified as `verify-install` does.
 */
export function newMeshctlUpgradeCommand(io: CliIo, readLine: () => Promise<string>): Command {
  return installGroup(new Command('upgrade').description('Upgrade the mesh control plane in-place')).action(async (flags: InstallFlags, cmd: Command) => {
    const global = cmd.optsWithGlobals<MeshctlGlobalFlags>();
    const install = await loadInstall();
    const cluster = install.clusterObjectsOf(await install.loadKubeClient(global));
    const name = install.installedStateName(flags.revision);
    const recorded = await cluster.read({ apiVersion: 'install.mesh.io/v1alpha1', kind: 'MeshOperator', metadata: { name, namespace: global.meshNamespace } });
    if (!recorded)
      throw new UsageError(`no installation to upgrade: MeshOperator ${global.meshNamespace}/${name} not found; use meshctl install`, { exitCode: 64 });
    const target = readBuildInfo().version;
    install.checkUpgradeEligible(recorded.metadata?.annotations?.[INSTALLED_VERSION_ANNOTATION] ?? '', target, flags.force);
    const installed = install.meshOperatorSchema.parse({
      apiVersion: recorded.apiVersion,
      kind: recorded.kind,
      metadata: { name },
      spec: (recorded as { spec?: unknown }).spec,
    });
    // The installed configuration is the first overlay: what the user does not change stays.
    const scratch = mkdtempSync(join(tmpdir(), 'meshctl-upgrade-'));
    let next;
    try {
      writeFileSync(join(scratch, 'installed.yaml'), JSON.stringify(installed));
      next = install.buildOperatorConfig({
        manifestsDir: manifestsOf(flags),
        files: [join(scratch, 'installed.yaml'), ...(flags.filename ?? [])],
        sets: flags.set ?? [],
        revision: flags.revision,
        ...forceOf(io, flags.force),
      });
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    io.stdout(install.upgradeDiff(installed, next));
    if (!flags.skipConfirmation && !flags.dryRun) {
      io.stdout('Confirm to proceed [y/N]? ');
      if (!/^y(es)?$/i.test((await readLine()).trim())) {
        io.stdout('Cancelled.\n');
        return;
      }
    }
    const rendered = await install.renderInstallation({ ...next, metadata: { name } }, { manifestsDir: manifestsOf(flags), components: [] });
    await install.applyInstallation({
      cluster,
      rendered,
      config: { ...next, metadata: { name } },
      dryRun: flags.dryRun,
      readinessTimeoutMs: flags.readinessTimeout,
      version: target,
      progress: (line) => io.stdout(`${line}\n`),
    });
    if (flags.verify && !flags.dryRun) await reportVerification(io, install.verifyInstallation, cluster, rendered);
  });
}

/** `meshctl verify-install`: what the recorded installation (or `-f`) renders is in the cluster and ready. */
export function newMeshctlVerifyInstallCommand(io: CliIo): Command {
  return new Command('verify-install')
    .description('Verifies the mesh installation status against the recorded installation or -f files')
    .addOption(new Option('-f, --filename <stringSlice>', 'MeshOperator files the installation was made from').argParser(stringSliceFlag))
    .option('-r, --revision <string>', 'Control plane revision to verify', '')
    .addOption(manifestsOption())
    .addOption(chartsOption())
    .action(async (flags: ManifestFlags, cmd: Command) => {
      const global = cmd.optsWithGlobals<MeshctlGlobalFlags>();
      const { buildOperatorConfig, clusterObjectsOf, installedStateName, loadKubeClient, meshOperatorSchema, renderInstallation, verifyInstallation } =
        await loadInstall();
      const cluster = clusterObjectsOf(await loadKubeClient(global));
      let config;
      if ((flags.filename ?? []).length > 0) {
        config = buildOperatorConfig({ manifestsDir: manifestsOf(flags), files: flags.filename ?? [], sets: [], revision: flags.revision });
      } else {
        const name = installedStateName(flags.revision);
        const recorded = await cluster.read({
          apiVersion: 'install.mesh.io/v1alpha1',
          kind: 'MeshOperator',
          metadata: { name, namespace: global.meshNamespace },
        });
        if (!recorded)
          throw new UsageError(
            `no installation recorded: MeshOperator ${global.meshNamespace}/${name} not found; give the files it was installed from with -f`,
            { exitCode: 64 },
          );
        const { metadata, ...rest } = recorded as { metadata?: { name?: string } } & Record<string, unknown>;
        config = meshOperatorSchema.parse({ ...rest, metadata: { name: metadata?.name ?? name } });
      }
      await reportVerification(io, verifyInstallation, cluster, await renderInstallation(config, { manifestsDir: manifestsOf(flags), components: [] }));
    });
}

async function reportVerification(
  io: CliIo,
  verify: (
    cluster: import('../../install/index.js').ClusterObjects,
    rendered: readonly import('../../install/index.js').RenderedComponent[],
  ) => Promise<{ report: string; ok: boolean }>,
  cluster: import('../../install/index.js').ClusterObjects,
  rendered: readonly import('../../install/index.js').RenderedComponent[],
): Promise<void> {
  const { report, ok } = await verify(cluster, rendered);
  io.stdout(report);
  if (!ok) throw new MeshError('verify-failed', 'the mesh is not installed correctly');
}
