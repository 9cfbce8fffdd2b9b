#!/usr/bin/env node
// Log caller info and stack traces point at the TypeScript sources.
process.setSourceMapsEnabled(true);
// One bundled module (scripts/bundle-programs.mjs) and the chunks a run needs, not some fourteen hundred files.
await import('../dist/bundle/pilot-discovery/pilot-discovery.js');
