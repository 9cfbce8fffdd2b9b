#!/usr/bin/env node
// Log caller info and stack traces point at the TypeScript sources.
process.setSourceMapsEnabled(true);
await import('../dist/cli/meshctl/meshctl.js');
