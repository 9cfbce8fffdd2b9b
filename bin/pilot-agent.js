#!/usr/bin/env node
// The agent runs beside every workload and is idle nearly all its life: its memory is paid once per
// pod, its CPU seldom. V8's optimizing compiler costs it about 6 MB of RSS (its code in the Node
// binary, its scratch memory on V8's threads, the code it emits), while the agent's traffic is
// handled natively (TLS, HTTP/2; the xDS relay passes bytes through). Set before the program's
// module loads, so that nothing of it is ever optimized; the baseline compiler stays for the start.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--no-opt');
// One bundled module (scripts/bundle-programs.mjs): this program starts beside every proxy, and
// loading one file instead of a few hundred is most of its start time.
await import('../dist/bundle/pilot-agent/pilot-agent.mjs');
