import { describe, expect, test } from '@jest/globals';
import type { ConnectionFacts } from './facts.js';
import { selectFilterChain, type FilterChainLike } from './filter-chain-match.js';

const connection = (overrides: Partial<ConnectionFacts> = {}): ConnectionFacts => ({
  destinationAddress: '127.10.0.2',
  destinationPort: 8080,
  sourceAddress: '127.10.0.9',
  transportProtocol: 'raw_buffer',
  ...overrides,
});

// The shape of a STRICT port next to the PERMISSIVE catch-all chains.
const strictPort: FilterChainLike[] = [
  { name: 'passthrough-plain', filter_chain_match: { transport_protocol: 'raw_buffer' } },
  { name: 'passthrough-tls', filter_chain_match: { transport_protocol: 'tls' } },
  { name: '8080-tls', filter_chain_match: { destination_port: 8080, transport_protocol: 'tls' } },
];

describe('filter chain match', () => {
  test('a port with chains wins over the catch-all, and never falls back to it', () => {
    expect(selectFilterChain(strictPort, connection({ transportProtocol: 'tls' }))?.name).toBe('8080-tls');
    // Plain text to a STRICT port matches no chain: the connection is reset.
    expect(selectFilterChain(strictPort, connection())).toBeUndefined();
    // Another port goes to the catch-all chains.
    expect(selectFilterChain(strictPort, connection({ destinationPort: 9090 }))?.name).toBe('passthrough-plain');
  });

  test('server names: exact before the longest wildcard, chains without names as the fallback', () => {
    const chains: FilterChainLike[] = [
      { name: 'any', filter_chain_match: {} },
      { name: 'wild', filter_chain_match: { server_names: ['*.example.com'] } },
      { name: 'wilder', filter_chain_match: { server_names: ['*.b.example.com'] } },
      { name: 'exact', filter_chain_match: { server_names: ['a.example.com'] } },
    ];
    expect(selectFilterChain(chains, connection({ serverName: 'a.example.com' }))?.name).toBe('exact');
    expect(selectFilterChain(chains, connection({ serverName: 'x.b.example.com' }))?.name).toBe('wilder');
    expect(selectFilterChain(chains, connection({ serverName: 'c.example.com' }))?.name).toBe('wild');
    expect(selectFilterChain(chains, connection({ serverName: 'other.org' }))?.name).toBe('any');
    expect(selectFilterChain(chains, connection())?.name).toBe('any');
  });

  test('application protocols and destination prefixes', () => {
    const chains: FilterChainLike[] = [
      { name: 'h2', filter_chain_match: { transport_protocol: 'tls', application_protocols: ['h2'] } },
      { name: 'tls', filter_chain_match: { transport_protocol: 'tls' } },
    ];
    expect(selectFilterChain(chains, connection({ transportProtocol: 'tls', applicationProtocols: ['h2', 'http/1.1'] }))?.name).toBe('h2');
    expect(selectFilterChain(chains, connection({ transportProtocol: 'tls', applicationProtocols: ['http/1.1'] }))?.name).toBe('tls');
    const vips: FilterChainLike[] = [
      { name: 'wide', filter_chain_match: { prefix_ranges: [{ address_prefix: '10.0.0.0', prefix_len: { value: 8 } }] } },
      { name: 'narrow', filter_chain_match: { prefix_ranges: [{ address_prefix: '10.1.2.3', prefix_len: { value: 32 } }] } },
    ];
    expect(selectFilterChain(vips, connection({ destinationAddress: '10.1.2.3' }))?.name).toBe('narrow');
    expect(selectFilterChain(vips, connection({ destinationAddress: '10.9.9.9' }))?.name).toBe('wide');
    expect(selectFilterChain(vips, connection({ destinationAddress: '192.168.0.1' }))).toBeUndefined();
  });
});
