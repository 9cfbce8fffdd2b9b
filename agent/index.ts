// pilot-agent: runs beside every proxy, assembled by `newAgent` on a manager: its identity and
// bootstrap (proxy/), certificates and their rotation (secrets/), the SDS server (sds/), the xDS
// proxy and debug tap (xds-proxy/), the supervision of the data plane process, and the capture
// rules of `mesh-iptables` (iptables/).
export * from './iptables/index.js';
export { newAgent, type Agent, type AgentOptions } from './agent.js';
export { AGENT_PATHS } from './agent-paths.js';
