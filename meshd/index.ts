// meshd, the daemon (pilot-discovery): assembled from typed options, every part registered on one manager.
export { newMeshd, type Meshd } from './meshd.js';
export type { MeshdOptions } from './options.js';
