import { main } from '../run-cli.js';
import { buildPilotAgent } from './pilot-agent-program.js';

await main(() => buildPilotAgent());
