import { main } from '../run-cli.js';
import { buildPilotDiscovery } from './pilot-discovery-program.js';

await main(() => buildPilotDiscovery());
