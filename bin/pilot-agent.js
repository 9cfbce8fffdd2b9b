#!/usr/bin/env node
// The agent runs beside every workload and is idle nearly all its life: its memory is paid once per
// pod, its CPU seldom. V8's optimizing compiler costs it about 6 MB of RSS (its code in the Node
// binary, its scratch memory on V8's threads, the code it emits), while the agent's traffic is
// handled natively (TLS, HTTP/2; the xDS relay passes bytes through). It is turned off before the
// program's module loads, so that nothing of it is ever optimized.
//
// Node compiles its own modules from a code cache made under V8's default flags, and a changed
// flag makes V8 refuse that cache: a module loaded after the change is compiled from its source
// (40-50 ms more start). The built-in modules the agent loads at start are loaded first; only
// those: one loaded that the agent would not use stays in its memory.
import { setFlagsFromString } from 'node:v8';

const BUILTINS = ['node:child_process', 'node:crypto', 'node:dns', 'node:fs/promises', 'node:http', 'node:http2', 'node:https', 'node:net', 'node:perf_hooks', 'node:stream', 'node:tls', 'node:zlib'];
await Promise.all(BUILTINS.map((name) => import(name)));
setFlagsFromString('--no-opt');
// One bundled module (scripts/bundle-programs.mjs): this program starts beside every proxy, and
// loading one file instead of a few hundred is most of its start time.
await import('../dist/bundle/pilot-agent/pilot-agent.mjs');
