import { describe, expect, test } from '@jest/globals';
import { decideDelta, decideSotw, type DeltaRequestView, type SotwRequestView } from './should-respond.js';
import { namesOnTheWire } from './request-handler.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from './envoy/type-urls.js';
import { newWatchState, syncStatus, type WatchState, type Watches } from './watch-state.js';
import { ADS_SERVICE, loadEnvoyProtos } from './envoy/envoy-protos.js';

function sent(typeUrl: string, names: string[], nonce: string, extra: Partial<WatchState> = {}): WatchState {
  return {
    ...newWatchState(typeUrl, names, names.length === 0 && (typeUrl === CLUSTER_TYPE || typeUrl === LISTENER_TYPE)),
    nonceSent: nonce,
    versionSent: 'v1',
    ...extra,
  };
}

function watches(...states: WatchState[]): Watches {
  return new Map(states.map((state) => [state.typeUrl, state]));
}

describe('decideSotw', () => {
  test.each<[string, Watches, SotwRequestView, { event: string; respond: boolean; subscribed?: string[] }]>([
    ['first request of a wildcard type', watches(), { type_url: CLUSTER_TYPE }, { event: 'init', respond: true }],
    ['first request with names', watches(), { type_url: ENDPOINT_TYPE, resource_names: ['a', 'b'] }, { event: 'init', respond: true }],
    [
      'reconnect: a nonce the stream never sent',
      watches(),
      { type_url: CLUSTER_TYPE, response_nonce: 'old', version_info: 'v0' },
      { event: 'init', respond: true },
    ],
    ['an empty nonce again', watches(sent(CLUSTER_TYPE, [], 'n1')), { type_url: CLUSTER_TYPE }, { event: 'init', respond: true }],
    ['ACK', watches(sent(CLUSTER_TYPE, [], 'n1')), { type_url: CLUSTER_TYPE, response_nonce: 'n1', version_info: 'v1' }, { event: 'ack', respond: false }],
    [
      'ACK with the same names',
      watches(sent(ENDPOINT_TYPE, ['a'], 'n1')),
      { type_url: ENDPOINT_TYPE, response_nonce: 'n1', resource_names: ['a'] },
      { event: 'ack', respond: false },
    ],
    [
      'NACK',
      watches(sent(CLUSTER_TYPE, [], 'n1')),
      { type_url: CLUSTER_TYPE, response_nonce: 'n1', error_detail: { code: 3, message: 'bad' } },
      { event: 'nack', respond: false },
    ],
    [
      'NACK with a stale nonce',
      watches(sent(CLUSTER_TYPE, [], 'n2')),
      { type_url: CLUSTER_TYPE, response_nonce: 'n1', error_detail: { message: 'bad' } },
      { event: 'nack', respond: false },
    ],
    ['stale nonce', watches(sent(CLUSTER_TYPE, [], 'n2')), { type_url: CLUSTER_TYPE, response_nonce: 'n1' }, { event: 'stale', respond: false }],
    [
      'stale nonce with new names',
      watches(sent(ENDPOINT_TYPE, ['a'], 'n2')),
      { type_url: ENDPOINT_TYPE, response_nonce: 'n1', resource_names: ['a', 'b'] },
      { event: 'stale', respond: false },
    ],
    [
      'a name added',
      watches(sent(ENDPOINT_TYPE, ['a'], 'n1')),
      { type_url: ENDPOINT_TYPE, response_nonce: 'n1', resource_names: ['a', 'b'] },
      { event: 'subscription-change', respond: true, subscribed: ['b'] },
    ],
    [
      'a name dropped',
      watches(sent(ENDPOINT_TYPE, ['a', 'b'], 'n1')),
      { type_url: ENDPOINT_TYPE, response_nonce: 'n1', resource_names: ['a'] },
      { event: 'subscription-change', respond: false, subscribed: [] },
    ],
    [
      'a name added to a wildcard-capable type',
      watches(sent(LISTENER_TYPE, ['x'], 'n1')),
      { type_url: LISTENER_TYPE, response_nonce: 'n1', resource_names: ['x', 'y'] },
      { event: 'subscription-change', respond: true },
    ],
    [
      'no names left on EDS',
      watches(sent(ENDPOINT_TYPE, ['a'], 'n1')),
      { type_url: ENDPOINT_TYPE, response_nonce: 'n1', resource_names: [] },
      { event: 'unsubscribe', respond: false },
    ],
    [
      'an ACK after a new CDS watch (warming)',
      watches(sent(ENDPOINT_TYPE, ['a'], 'n1', { alwaysRespond: true })),
      { type_url: ENDPOINT_TYPE, response_nonce: 'n1', resource_names: ['a'] },
      { event: 'force', respond: true },
    ],
  ])('%s', (_case, before, request, expected) => {
    const decision = decideSotw(before, request);
    expect(decision).toMatchObject({ event: expected.event, respond: expected.respond });
    if ('subscribed' in expected) expect(decision.subscribed).toEqual(expected.subscribed);
    else expect(decision.subscribed).toBeUndefined();
  });

  test('an ACK records the nonce and version and clears the last error', () => {
    const before = watches(sent(CLUSTER_TYPE, [], 'n1', { lastError: 'old problem' }));
    const after = decideSotw(before, { type_url: CLUSTER_TYPE, response_nonce: 'n1', version_info: 'v1' }).watches.get(CLUSTER_TYPE);
    expect(after).toMatchObject({ nonceAcked: 'n1', versionAcked: 'v1', lastError: '' });
    expect(syncStatus(after)).toBe('SYNCED');
  });

  test('a NACK keeps what was acknowledged and records the error', () => {
    const before = watches(sent(CLUSTER_TYPE, [], 'n2', { nonceAcked: 'n1', versionAcked: 'v0' }));
    const decision = decideSotw(before, {
      type_url: CLUSTER_TYPE,
      response_nonce: 'n2',
      version_info: 'v0',
      error_detail: { code: 3, message: 'cluster a: bad' },
    });
    expect(decision.error).toBe('cluster a: bad');
    expect(decision.watches.get(CLUSTER_TYPE)).toMatchObject({ nonceAcked: 'n1', versionAcked: 'v0', lastError: 'cluster a: bad' });
    expect(syncStatus(decision.watches.get(CLUSTER_TYPE))).toBe('ERROR');
  });

  test('a new CDS watch makes the next EDS ACK answer (warming)', () => {
    const before = watches(sent(ENDPOINT_TYPE, ['a'], 'n1'));
    const decision = decideSotw(before, { type_url: CLUSTER_TYPE });
    expect(decision.watches.get(ENDPOINT_TYPE)?.alwaysRespond).toBe(true);
    expect(decision.watches.get(CLUSTER_TYPE)).toMatchObject({ wildcard: true, names: [] });
  });

  test('unsubscribe forgets the type and says which names went', () => {
    const decision = decideSotw(watches(sent(ROUTE_TYPE, ['r1', 'r2'], 'n1')), { type_url: ROUTE_TYPE, response_nonce: 'n1', resource_names: [] });
    expect(decision.watches.has(ROUTE_TYPE)).toBe(false);
    expect(decision.unsubscribed).toEqual(['r1', 'r2']);
  });

  test('the decision does not change the watches it was given', () => {
    const before = watches(sent(CLUSTER_TYPE, [], 'n1'));
    const snapshot = structuredClone([...before.entries()]);
    decideSotw(before, { type_url: CLUSTER_TYPE, response_nonce: 'n1', error_detail: { message: 'x' } });
    decideSotw(before, { type_url: CLUSTER_TYPE, response_nonce: 'n1' });
    expect([...before.entries()]).toEqual(snapshot);
  });
});

describe('decideSotw with the names as received on the wire', () => {
  const protos = loadEnvoyProtos();
  const type = protos.lookupType('envoy.service.discovery.v3.DiscoveryRequest');
  const method = protos.serviceDefinition(ADS_SERVICE)['StreamAggregatedResources'];
  const received = (message: object): SotwRequestView =>
    method?.requestDeserialize(Buffer.from(type.encode(type.fromObject(message)).finish())) as SotwRequestView;
  const names = Array.from({ length: 100 }, (_, i) => `outbound|80||svc-${i}.ns.svc.cluster.local`).sort();

  // As the request handler calls it: with the names' encoding the decoder kept, compared with the watch's.
  const decideOnTheWire = (before: Watches, request: SotwRequestView) => decideSotw(before, request, namesOnTheWire(before, request));

  test("an ACK repeating the subscription keeps the watch's names; a changed name is a subscription change", () => {
    const init = decideOnTheWire(watches(), received({ type_url: ENDPOINT_TYPE, resource_names: [...names].reverse() }));
    const watch = init.watches.get(ENDPOINT_TYPE) as WatchState;
    expect(watch.names).toEqual(names);
    const sentOnce = watches({ ...watch, nonceSent: 'n1', versionSent: 'v1' });
    // The first ACK (sorted by the proxy) matches the names; every later one has the same bytes.
    const first = decideOnTheWire(sentOnce, received({ type_url: ENDPOINT_TYPE, response_nonce: 'n1', version_info: 'v1', resource_names: names }));
    expect(first.event).toBe('ack');
    expect(first.watches.get(ENDPOINT_TYPE)?.names).toBe(watch.names);
    const again = decideOnTheWire(first.watches, received({ type_url: ENDPOINT_TYPE, response_nonce: 'n1', version_info: 'v1', resource_names: names }));
    expect(again.event).toBe('ack');
    expect(again.watches.get(ENDPOINT_TYPE)?.names).toBe(watch.names);
    // The encoding held stays the first one: each ACK's own bytes are not kept.
    const held = first.watches.get(ENDPOINT_TYPE)?.namesEncoded;
    expect(held).toBeDefined();
    expect(again.watches.get(ENDPOINT_TYPE)?.namesEncoded).toBe(held);
    expect(again.watches.get(ENDPOINT_TYPE)).toMatchObject({
      typeUrl: ENDPOINT_TYPE,
      nonceSent: 'n1',
      versionSent: 'v1',
      nonceAcked: 'n1',
      versionAcked: 'v1',
      lastError: '',
      alwaysRespond: false,
    });

    const swapped = [...names.slice(0, -1), 'outbound|80||zz.ns.svc.cluster.local'];
    const change = decideOnTheWire(again.watches, received({ type_url: ENDPOINT_TYPE, response_nonce: 'n1', version_info: 'v1', resource_names: swapped }));
    expect(change).toMatchObject({
      event: 'subscription-change',
      respond: true,
      subscribed: ['outbound|80||zz.ns.svc.cluster.local'],
      unsubscribed: [names[names.length - 1]],
    });
    expect(change.watches.get(ENDPOINT_TYPE)?.names).toEqual([...swapped].sort());
  });
});

describe('syncStatus', () => {
  test.each<[string, WatchState | undefined, string]>([
    ['no watch', undefined, 'NOT_SENT'],
    ['nothing sent', newWatchState(CLUSTER_TYPE, [], true), 'NOT_SENT'],
    ['sent, not acknowledged', sent(CLUSTER_TYPE, [], 'n1'), 'STALE'],
    ['acknowledged', sent(CLUSTER_TYPE, [], 'n1', { nonceAcked: 'n1' }), 'SYNCED'],
    ['an older response acknowledged', sent(CLUSTER_TYPE, [], 'n2', { nonceAcked: 'n1' }), 'STALE'],
    ['rejected', sent(CLUSTER_TYPE, [], 'n2', { nonceAcked: 'n1', lastError: 'bad' }), 'ERROR'],
  ])('%s', (_case, state, expected) => {
    expect(syncStatus(state)).toBe(expected);
  });
});

describe('decideDelta', () => {
  test.each<
    [
      string,
      Watches,
      DeltaRequestView,
      { event: string; respond: boolean; names?: string[]; wildcard?: boolean; subscribed?: string[]; unsubscribed?: string[] },
    ]
  >([
    ['first wildcard request (legacy, no names)', watches(), { type_url: CLUSTER_TYPE }, { event: 'init', respond: true, names: [], wildcard: true }],
    [
      'first wildcard request with *',
      watches(),
      { type_url: LISTENER_TYPE, resource_names_subscribe: ['*'] },
      { event: 'init', respond: true, names: [], wildcard: true },
    ],
    [
      'first request with names',
      watches(),
      { type_url: ENDPOINT_TYPE, resource_names_subscribe: ['a', 'b'] },
      { event: 'init', respond: true, names: ['a', 'b'], wildcard: false },
    ],
    [
      'first request with names out of order and repeated',
      watches(),
      { type_url: ENDPOINT_TYPE, resource_names_subscribe: ['b', 'a', 'b'] },
      { event: 'init', respond: true, names: ['a', 'b'], wildcard: false },
    ],
    [
      'first request naming * among names',
      watches(),
      { type_url: LISTENER_TYPE, resource_names_subscribe: ['y', '*', 'x'] },
      { event: 'init', respond: true, names: ['x', 'y'], wildcard: true },
    ],
    [
      'first request naming * on a type that has no wildcard',
      watches(),
      { type_url: ENDPOINT_TYPE, resource_names_subscribe: ['*', 'a'] },
      { event: 'init', respond: true, names: ['a'], wildcard: false },
    ],
    [
      'first request unsubscribing what it names',
      watches(),
      { type_url: ENDPOINT_TYPE, resource_names_subscribe: ['a', 'b'], resource_names_unsubscribe: ['b'] },
      { event: 'init', respond: true, names: ['a'], wildcard: false },
    ],
    [
      'reconnect with initial versions (they count as subscribed)',
      watches(),
      { type_url: ENDPOINT_TYPE, resource_names_subscribe: ['a'], initial_resource_versions: { b: 'v' } },
      { event: 'init', respond: true, names: ['a', 'b'] },
    ],
    ['ACK', watches(sent(ENDPOINT_TYPE, ['a'], 'n1')), { type_url: ENDPOINT_TYPE, response_nonce: 'n1' }, { event: 'ack', respond: false, names: ['a'] }],
    [
      'NACK',
      watches(sent(ENDPOINT_TYPE, ['a'], 'n1')),
      { type_url: ENDPOINT_TYPE, response_nonce: 'n1', error_detail: { message: 'bad' } },
      { event: 'nack', respond: false },
    ],
    ['stale nonce', watches(sent(ENDPOINT_TYPE, ['a'], 'n2')), { type_url: ENDPOINT_TYPE, response_nonce: 'n1' }, { event: 'stale', respond: false }],
    [
      'subscribe more (spontaneous)',
      watches(sent(ENDPOINT_TYPE, ['a'], 'n1')),
      { type_url: ENDPOINT_TYPE, resource_names_subscribe: ['b'] },
      { event: 'subscription-change', respond: true, names: ['a', 'b'], subscribed: ['b'], unsubscribed: [] },
    ],
    [
      'unsubscribe only: nothing to send',
      watches(sent(ENDPOINT_TYPE, ['a', 'b'], 'n1')),
      { type_url: ENDPOINT_TYPE, resource_names_unsubscribe: ['b'] },
      { event: 'subscription-change', respond: false, names: ['a'], subscribed: [], unsubscribed: ['b'] },
    ],
    [
      'unsubscribing a name never subscribed is an ACK',
      watches(sent(ENDPOINT_TYPE, ['a'], 'n1')),
      { type_url: ENDPOINT_TYPE, response_nonce: 'n1', resource_names_unsubscribe: ['zz'] },
      { event: 'ack', respond: false, names: ['a'] },
    ],
    [
      'warming after a new CDS watch',
      watches(sent(ENDPOINT_TYPE, ['a'], 'n1', { alwaysRespond: true })),
      { type_url: ENDPOINT_TYPE, response_nonce: 'n1' },
      { event: 'force', respond: true },
    ],
  ])('%s', (_case, before, request, expected) => {
    const decision = decideDelta(before, request);
    expect(decision).toMatchObject({ event: expected.event, respond: expected.respond });
    const watch = decision.watches.get(request.type_url);
    if (expected.names) expect(watch?.names).toEqual(expected.names);
    if (expected.wildcard !== undefined) expect(watch?.wildcard).toBe(expected.wildcard);
    if (expected.subscribed) expect(decision.subscribed).toEqual(expected.subscribed);
    if (expected.unsubscribed) expect(decision.unsubscribed).toEqual(expected.unsubscribed);
  });

  test("a first request's names decoded once for many streams (a frozen list) become each watch's names as they are", () => {
    const shared = Object.freeze(['outbound|80||a.ns.svc.cluster.local', 'outbound|80||b.ns.svc.cluster.local']);
    const first = decideDelta(watches(), { type_url: ENDPOINT_TYPE, resource_names_subscribe: shared });
    const second = decideDelta(watches(), { type_url: ENDPOINT_TYPE, resource_names_subscribe: shared });
    expect(first.watches.get(ENDPOINT_TYPE)?.names).toBe(shared);
    expect(second.watches.get(ENDPOINT_TYPE)?.names).toBe(shared);
    // Out of order, it is sorted into a list of the watch's own.
    const unordered = Object.freeze([...shared].reverse());
    const sorted = decideDelta(watches(), { type_url: ENDPOINT_TYPE, resource_names_subscribe: unordered }).watches.get(ENDPOINT_TYPE)?.names;
    expect(sorted).toEqual(shared);
    expect(unordered).toEqual([...shared].reverse());
  });

  test('an ACK takes the version that was sent with the nonce', () => {
    const decision = decideDelta(watches(sent(CLUSTER_TYPE, [], 'n1', { versionSent: 'v7' })), { type_url: CLUSTER_TYPE, response_nonce: 'n1' });
    expect(decision.watches.get(CLUSTER_TYPE)).toMatchObject({ nonceAcked: 'n1', versionAcked: 'v7' });
  });

  test('an ACK keeps every other field of the watch and clears the error; a request without a nonce keeps the last ACK', () => {
    const before = sent(ENDPOINT_TYPE, ['a', 'b'], 'n2', { versionSent: 'v2', nonceAcked: 'n1', versionAcked: 'v1', lastError: 'bad', alwaysRespond: false });
    const acked = decideDelta(watches(before), { type_url: ENDPOINT_TYPE, response_nonce: 'n2' }).watches.get(ENDPOINT_TYPE);
    expect(acked).toEqual({ ...before, nonceAcked: 'n2', versionAcked: 'v2', lastError: '' });
    expect(acked?.names).toBe(before.names);
    const withoutNonce = decideDelta(watches(before), { type_url: ENDPOINT_TYPE }).watches.get(ENDPOINT_TYPE);
    expect(withoutNonce).toEqual({ ...before, lastError: '' });
  });
});
