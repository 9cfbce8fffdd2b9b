import { Command, Option } from 'commander';
import { ExitStatus } from '../../runtime/index.js';
import { stringArrayFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

interface PreviewFlags {
  filename: string[];
  output: 'text' | 'json';
}

const HELP = `
Replays the recent traffic the proxies of the selected workloads recorded (their
/recent_requests) through the decisions the daemon's generators would give them, with the
cluster's config now and with the files applied, and prints the requests whose verdict would
change, grouped by source, destination, request and verdicts, with their counts.

Exit status: 0 when no recorded request would change verdict, 3 when some would, 64 or 65 for a
bad command line or file.

Examples:
  # What would this AuthorizationPolicy break?
  meshctl x authz preview -f deny-headers.yaml

  # Is foo ready for STRICT mutual TLS? (the plain-text callers it would cut off)
  meshctl x authz preview -f strict-foo.yaml -n foo -o json
`;

/** `meshctl x authz preview -f <file>`: what a policy change would do to the traffic the proxies recorded. */
export function newMeshctlAuthzPreviewCommand(io: CliIo, readStdin: () => Promise<string>): Command {
  return new Command('preview')
    .description('Preview which recent requests a policy change would allow or deny differently, before it is applied')
    .addHelpText('after', HELP)
    .addOption(
      new Option('-f, --filename <stringArray>', 'The changed AuthorizationPolicy, RequestAuthentication or PeerAuthentication (files, folders, - for stdin)')
        .argParser(stringArrayFlag)
        .makeOptionMandatory(),
    )
    .addOption(new Option('-o, --output <string>', 'Output format').choices(['text', 'json']).default('text'))
    .action(async (flags: PreviewFlags, command: Command) => {
      const meshctl = await import('../../meshctl/index.js');
      const global = command.optsWithGlobals<MeshctlGlobalFlags>();
      const kubeConfig = await meshctl.loadKubeClient(global);
      const report = await meshctl.previewAuthzChange({
        kubeConfig,
        files: flags.filename,
        namespace: meshctl.namespaceOf(kubeConfig, global.namespace),
        meshNamespace: global.meshNamespace,
        readStdin,
      });
      io.stdout(flags.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : meshctl.renderPreview(report));
      if (report.changes.length > 0) throw new ExitStatus(meshctl.VERDICTS_WOULD_CHANGE);
    });
}
