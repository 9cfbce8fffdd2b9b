#!/usr/bin/env node
// One bundled module (scripts/bundle-programs.mjs): this program starts beside every proxy, and
// loading one file instead of a few hundred is most of its start time.
await import('../dist/bundle/pilot-agent/pilot-agent.mjs');
