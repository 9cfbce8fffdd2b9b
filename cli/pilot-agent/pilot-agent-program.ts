import { Command } from 'commander';
import { addLoggingFlags, loadProcessSettings, type Settings } from '../../runtime/index.js';
import { intFlag } from '../flags.js';
import { newMeshCleanIptablesCommand, newMeshIptablesCommand } from './mesh-iptables-command.js';
import { newProxyCommand } from './proxy-command.js';
import { requestCommand, sendDebugRequest } from '../request-command.js';
import { processIo, type CliIo } from '../run-cli.js';
import { newVersionCommand } from '../version-command.js';
import { newWaitCommand } from './wait-command.js';

export function buildPilotAgent(io: CliIo = processIo, loadSettings: () => Settings<'pilot-agent'> = () => loadProcessSettings('pilot-agent')): Command {
  const settings = loadSettings();
  const program = new Command('pilot-agent').description('Mesh Pilot agent runs in the sidecar or gateway container and bootstraps Envoy.').helpCommand(false);
  const request = requestCommand('Makes an HTTP request to the Envoy admin API')
    .option('--debug-port <int32>', 'Set the port to make a local request to. The default points to the Envoy admin API.', intFlag, 15000)
    .action((method: string, path: string, body: string | undefined, options: { debugPort: number }) =>
      sendDebugRequest(`http://localhost:${options.debugPort}`, method, path, body, io),
    );
  program.addCommand(request);
  program.addCommand(newProxyCommand(io, () => ({ settings })));
  program.addCommand(newWaitCommand(io));
  program.addCommand(newVersionCommand(io));
  const iptablesDeps = { defaults: { redirectDns: settings.get('MESH_META_DNS_CAPTURE') } };
  program.addCommand(newMeshIptablesCommand(io, iptablesDeps));
  program.addCommand(newMeshCleanIptablesCommand(io, iptablesDeps));
  // Every command carries the logging flags, as the seed's table says.
  for (const command of program.commands) addLoggingFlags(command);
  return program;
}
