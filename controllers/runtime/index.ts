// The controller runtime: what every process (daemon, agent, utility) plugs into.
export * from './errors.js';
export * from './clock.js';
export * from './runnable.js';
export * from './source.js';
export * from './settings-info.js';
export * from './duration.js';
export * from './settings.js';
export * from './log/index.js';
export * from './metrics-catalog.js';
export * from './metrics.js';
export * from './listen-address.js';
export * from './monitoring-server.js';
export * from './controlz.js';
export * from './version.js';
