import { Command } from 'commander';
import { addLoggingFlags, loadProcessSettings, type Settings } from '../../runtime/index.js';
import { newDiscoveryCommand } from './discovery-command.js';
import { meshdOptionsFrom, runDiscovery } from './discovery-server.js';
import { requestCommand, sendDebugRequest } from '../request-command.js';
import { processIo, type CliIo } from '../run-cli.js';
import { newVersionCommand } from '../version-command.js';

/** The daemon's metrics and debug HTTP, which `pilot-discovery request` talks to. */
const DAEMON_DEBUG_URL = 'http://localhost:15014';

export function buildPilotDiscovery(
  io: CliIo = processIo,
  loadSettings: () => Settings<'pilot-discovery'> = () => loadProcessSettings('pilot-discovery'),
): Command {
  // Settings are read before flags so that flag defaults can come from them (POD_NAMESPACE, CLUSTER_ID).
  const settings = loadSettings();
  const program = new Command('pilot-discovery').description('Mesh Pilot provides management plane functionality to the mesh.').helpCommand(false);
  program.addCommand(
    newDiscoveryCommand({ namespace: settings.get('POD_NAMESPACE'), clusterID: settings.get('CLUSTER_ID') }, (flags) =>
      runDiscovery(meshdOptionsFrom(flags, { settings, args: process.argv })),
    ),
  );
  program.addCommand(
    requestCommand('Makes an HTTP request to Pilot metrics/debug endpoint').action((method: string, path: string, body: string | undefined) =>
      sendDebugRequest(DAEMON_DEBUG_URL, method, path, body, io),
    ),
  );
  program.addCommand(newVersionCommand(io));
  // Every command carries the logging flags, as the seed's table says.
  for (const command of program.commands) addLoggingFlags(command);
  return program;
}
