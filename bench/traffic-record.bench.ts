/**
 * The traffic record's bound and cost (issue 38 item 2): prints figures and ratios, never passes
 * or fails.
 *
 *   - a flood of distinct requests (mutual TLS and plain text, a kept header, a token's claims)
 *     into one proxy's record with the default limits: the heap it holds afterwards, measured
 *     after a full collection, against the 2 MB goal and against the record's own estimate;
 *   - the cost per request of recording (the facts kept, then the ring), against a yardstick
 *     measured in the same run: serialising the same request facts once with JSON.stringify.
 *
 *   npm run bench:record [requests]
 */
import { performance } from 'node:perf_hooks';
import type { ConnectionFacts, HttpDecision, HttpRequestFacts, PolicyReadable } from '../dataplane/decisions/index.js';
import { newClaimsCache, recordedRequestOf } from '../dataplane/recorded-request-of.js';
import { DEFAULT_TRAFFIC_RECORD_LIMITS, newTrafficRecord } from '../dataplane/traffic-record.js';

const REQUESTS = Number(process.argv[2] ?? 200_000);
const GOAL_BYTES = 2 * 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc (npm run bench:record)');

const READABLE: PolicyReadable = {
  headers: new Set(['x-user']),
  claims: new Set(['groups']),
  tokenHeaders: new Map([['authorization', ['Bearer ']]]),
  tokenParams: new Set(['access_token']),
};
// A token whose payload carries the claims a policy reads (the signature is not checked here).
const payload = (i: number): string =>
  Buffer.from(JSON.stringify({ iss: 'issuer@mesh', sub: `user-${i % 500}`, groups: ['dev'], exp: 2_000_000_000 })).toString('base64url');
const TOKENS = Array.from({ length: 500 }, (_, i) => `eyJhbGciOiJSUzI1NiJ9.${payload(i)}.c2ln`);

function traffic(i: number): { connection: ConnectionFacts; request: HttpRequestFacts; decision: HttpDecision } {
  const mtls = i % 3 !== 0;
  const connection: ConnectionFacts = {
    destinationAddress: '10.0.1.10',
    destinationPort: 8080,
    sourceAddress: `10.1.${(i >> 8) & 255}.${i & 255}`,
    transportProtocol: mtls ? 'tls' : 'raw_buffer',
    applicationProtocols: ['http/1.1'],
    ...(mtls ? { peerCertificate: { uriSans: [`spiffe://cluster.local/ns/ns-${i % 50}/sa/sa-${i % 7}`], dnsSans: [], subject: '', sha256: '' } } : {}),
  };
  const request: HttpRequestFacts = {
    method: i % 5 === 0 ? 'POST' : 'GET',
    host: 'httpbin.foo:8000',
    path: `/items/${i}?page=${i % 10}`,
    headers: { 'x-user': `user-${i % 100}`, 'user-agent': 'curl/8.5.0', 'x-request-id': `req-${i}`, authorization: `Bearer ${TOKENS[i % 500]}` },
    protocol: 'HTTP/1.1',
  };
  const decision: HttpDecision = {
    kind: 'respond',
    status: 403,
    body: 'RBAC: access denied',
    by: 'rbac',
    rbac: [{ allowed: false, matchedPolicy: 'ns[foo]-policy[deny-items]-rule[0]' }],
  };
  return { connection, request, decision };
}

const inputs = Array.from({ length: REQUESTS }, (_, i) => traffic(i));

/** The flood into a record that lives only here: the heap is read with it, then without it. */
function flood(): { recordMs: number; view: { recorded: number; dropped: number; bytes: number }; withRecord: number } {
  const record = newTrafficRecord(DEFAULT_TRAFFIC_RECORD_LIMITS);
  const claimsOf = newClaimsCache();
  const started = performance.now();
  for (const { connection, request, decision } of inputs) {
    if (!record.sampled()) continue;
    record.add(recordedRequestOf({ listener: 'virtualInbound', direction: 'inbound', connection, request, decision, readable: READABLE, claimsOf }));
  }
  const recordMs = performance.now() - started;
  const { recorded, dropped, bytes } = record.view();
  gc?.();
  return { recordMs, view: { recorded, dropped, bytes }, withRecord: process.memoryUsage().heapUsed };
}

// What the record holds: the heap with it less the heap without it (the inputs' strings, flattened
// while it read them, stay either way).
const { recordMs, view, withRecord } = flood();
gc();
const held = withRecord - process.memoryUsage().heapUsed;
const kept = view.recorded - view.dropped;

const yardstickStart = performance.now();
let characters = 0;
for (const { connection, request } of inputs) characters += JSON.stringify({ connection, request }).length;
const yardstickMs = performance.now() - yardstickStart;

const perRequestUs = (recordMs * 1000) / REQUESTS;
console.log(`traffic record, ${REQUESTS.toLocaleString('en-US')} distinct requests, default limits`);
console.log(`  kept ${kept} requests, dropped ${view.dropped}; estimate ${(view.bytes / 1024).toFixed(0)} KiB`);
console.log(
  `  heap held after the flood: ${(held / 1024).toFixed(0)} KiB = ${(held / GOAL_BYTES).toFixed(2)} × the 2 MB goal; ${(held / view.bytes).toFixed(2)} × the estimate`,
);
console.log(
  `  per request: ${perRequestUs.toFixed(2)} µs = ${(recordMs / yardstickMs).toFixed(2)} × serialising its facts once (${characters > 0 ? 'yardstick' : ''} ${((yardstickMs * 1000) / REQUESTS).toFixed(2)} µs); ${((perRequestUs / 200) * 100).toFixed(1)} % of a 200 µs hop`,
);
