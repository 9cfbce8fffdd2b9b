import { Command, Option } from 'commander';
import { UsageError } from '../../runtime/index.js';
import { boolOption, stringSliceFlag } from '../flags.js';
import { readProcessStdin, type CliIo } from '../run-cli.js';

export interface MeshctlValidateDeps {
  /** What `-f -` reads; the process's standard input unless a test supplies it. */
  readStdin?: () => Promise<string>;
}

interface ValidateFlags {
  filename?: string[];
  referential: boolean;
}

const EXAMPLES = `
Examples:
  # Validate a gateway definition
  meshctl validate -f samples/bookinfo-gateway.yaml

  # The same, with the shorthand
  meshctl v -f samples/bookinfo-gateway.yaml

  # Validate every .yaml, .yml and .json file under a directory
  meshctl validate -f deploy/samples/policies

  # Validate what the cluster holds
  kubectl get virtualservices,destinationrules -A -o yaml | meshctl validate -f -
`;

/** `meshctl validate`: checks policy files offline, as the admission webhook would check them. */
export function newMeshctlValidateCommand(io: CliIo, deps: MeshctlValidateDeps = {}): Command {
  return new Command('validate')
    .alias('v')
    .usage('-f FILENAME [options]')
    .description('Validate mesh policy and rules files')
    .addOption(new Option('-f, --filename <stringSlice>', 'Inputs of files to validate (files, directories, or - for stdin)').argParser(stringSliceFlag))
    .addOption(boolOption('-x, --referential', 'Enable structural validation for policy and telemetry', true))
    .addHelpText('after', EXAMPLES)
    .action(async (options: ValidateFlags) => {
      const inputs = options.filename ?? [];
      if (inputs.length === 0) throw new UsageError('expected resources to validate: give files or directories with -f (or -f - for stdin)');
      const { validateFiles } = await import('../../meshctl/validate/index.js');
      await validateFiles(inputs, options.referential, { io, readStdin: deps.readStdin ?? readProcessStdin });
    });
}
