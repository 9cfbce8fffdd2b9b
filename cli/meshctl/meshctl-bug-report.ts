import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { UsageError, errorMessage, type BuildInfo } from '../../runtime/index.js';
import { boolOption, describeDuration, durationFlag, listDefault, stringSliceFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';
import { versionOptions, type VersionOptions } from '../version-command.js';

/** The seed's defaults, kept here so that building the command loads nothing of meshctl/. */
const EXCLUDED_BY_DEFAULT = ['orch-system', 'orch-public', 'orch-node-lease', 'local-path-storage'];
const TIMEOUT_DEFAULT_MS = 30 * 60_000;

/** `--include`/`--exclude`: a value without `/` splits on commas (namespaces); one with `/` is one spec. */
function specFlag(value: string, previous: string[] | undefined): string[] {
  if (!value.includes('/')) return stringSliceFlag(value, previous);
  return stringSliceFlag('', previous).concat(value.trim());
}

/**
 * `meshctl bug-report`: the cluster's state, the daemons' and the proxies' logs and debug views
 * into `bug-report.tar.gz`; `bug-report version` prints the client's build information.
 */
export function newMeshctlBugReportCommand(deps: { io: CliIo; buildInfo: () => BuildInfo; cwd?: () => string }): Command {
  const version = versionOptions(new Command('version').description('Prints out build version information')).action(async (options: VersionOptions) => {
    const { renderVersionReport } = await import('../../meshctl/index.js');
    deps.io.stdout(
      renderVersionReport({ client: deps.buildInfo() }, { ...(options.output !== undefined ? { output: options.output } : {}), short: options.short }),
    );
  });
  const command = new Command('bug-report')
    .description('Cluster information and log capture support tool')
    .option(
      '--critical-errs <strings>',
      'List of comma separated glob patterns to match against log lines. Pods whose logs hold a match are listed first in bug-report.log, with the count of matching lines.',
      stringSliceFlag,
      [],
    )
    .option(
      '--ignore-errs <strings>',
      'List of comma separated glob patterns; log lines matching any of them are not counted as critical errors.',
      stringSliceFlag,
      [],
    )
    .option('--dir <string>', "Write the report's files under <dir>/bug-report and the archive beside them, instead of only ./bug-report.tar.gz.", '')
    .addOption(boolOption('--dry-run', 'Only print what would be gathered; write nothing.', false))
    .addOption(
      new Option('--duration <duration>', 'How far back from --end-time to gather logs. Excludes --start-time.')
        .argParser(durationFlag)
        .default(0, describeDuration(0)),
    )
    .option('--start-time <string>', 'Gather logs from this time on (RFC 3339). Excludes --duration.', '')
    .option('--end-time <string>', 'Gather logs up to this time (RFC 3339); default now.', '')
    .addOption(
      new Option(
        '--exclude <strings>',
        'Specs of what to leave out: ns1,ns2/dep1,dep2/pod1,pod2/lbl1=val1/ann1=val1/cntr1 (globs allowed; a value without / is a list of namespaces).',
      )
        .argParser(specFlag)
        .default(listDefault(EXCLUDED_BY_DEFAULT), `[${EXCLUDED_BY_DEFAULT.join(',')}]`),
    )
    .option('--include <strings>', 'Specs of what to gather, as --exclude reads them; default everything. The mesh namespace is always included.', specFlag, [])
    .option('-f, --filename <string>', 'A YAML file of these settings, keyed by flag name; flags given win.', '')
    .addOption(boolOption('--full-secrets', "Put the secrets' values in the archive; by default only their names and types.", false))
    .option('--mesh-namespace <string>', 'Namespace where the control plane runs', 'mesh-system')
    .addOption(
      new Option('--timeout <duration>', 'The longest the gathering may take; then what was gathered is archived.')
        .argParser(durationFlag)
        .default(TIMEOUT_DEFAULT_MS, describeDuration(TIMEOUT_DEFAULT_MS)),
    )
    .addCommand(version);
  return command.action(async (_options: Record<string, unknown>, self: Command) => {
    const meshctl = await import('../../meshctl/index.js');
    const global = (self.parent?.opts() ?? {}) as MeshctlGlobalFlags;
    const filename = String(self.getOptionValue('filename') ?? '');
    let fromFile: Partial<import('../../meshctl/index.js').BugReportSettings> = {};
    if (filename !== '') {
      let text: string;
      try {
        text = readFileSync(filename, 'utf8');
      } catch (error) {
        throw new UsageError(`--filename ${filename}: ${errorMessage(error)}`, { exitCode: 64 });
      }
      fromFile = meshctl.parseBugReportFile(text, filename);
    }
    const pick = <K extends import('../../meshctl/index.js').BugReportSettingName>(
      name: K,
      attribute: string,
    ): import('../../meshctl/index.js').BugReportSettings[K] => {
      const flag = self.getOptionValue(attribute) as import('../../meshctl/index.js').BugReportSettings[K];
      if (self.getOptionValueSource(attribute) === 'cli') return flag;
      return fromFile[name] ?? (name === 'mesh-namespace' && global.meshNamespace ? (global.meshNamespace as typeof flag) : flag);
    };
    const settings: import('../../meshctl/index.js').BugReportSettings = {
      'critical-errs': pick('critical-errs', 'criticalErrs'),
      'ignore-errs': pick('ignore-errs', 'ignoreErrs'),
      dir: pick('dir', 'dir'),
      'dry-run': pick('dry-run', 'dryRun'),
      duration: pick('duration', 'duration'),
      'start-time': pick('start-time', 'startTime'),
      'end-time': pick('end-time', 'endTime'),
      exclude: pick('exclude', 'exclude'),
      include: pick('include', 'include'),
      'full-secrets': pick('full-secrets', 'fullSecrets'),
      'mesh-namespace': pick('mesh-namespace', 'meshNamespace'),
      timeout: pick('timeout', 'timeout'),
    };
    const options = meshctl.resolveBugReportOptions(settings, new Date());
    const kubeConfig = await meshctl.loadKubeClient(global);
    const result = await meshctl.runBugReport(
      { kubeConfig, client: deps.buildInfo(), progress: (line) => deps.io.stdout(`${line}\n`), now: () => new Date(), cwd: deps.cwd?.() ?? process.cwd() },
      options,
    );
    if (result.archivePath !== undefined)
      deps.io.stdout(
        `Done${result.timedOut ? ' (timed out: the archive holds what was gathered before)' : ''}${result.failures > 0 ? `; ${result.failures} items could not be gathered, see bug-report.log` : ''}.\n`,
      );
  });
}
