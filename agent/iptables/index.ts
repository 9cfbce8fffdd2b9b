// Traffic capture for the sidecar: `pilot-agent mesh-iptables` and `mesh-clean-iptables`.
export * from './constants.js';
export * from './cidr.js';
export * from './flag-values.js';
export * from './capture-config.js';
export * from './rule-set.js';
export * from './build-rules.js';
export * from './render.js';
export * from './command-runner.js';
export * from './apply-rules.js';
export * from './cleanup.js';
export * from './resolv-conf.js';
export * from './validate-interception.js';
export * from './commands.js';
