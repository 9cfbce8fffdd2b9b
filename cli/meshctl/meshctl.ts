import { buildMeshctl } from './meshctl-program.js';
import { main } from '../run-cli.js';

await main(() => buildMeshctl());
