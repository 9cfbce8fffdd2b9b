import { describe, expect, test } from '@jest/globals';
import { DEFAULT_MESH_CONFIG } from '../../crds/index.js';
import { analyze, meshObject } from '../testing/fixtures.js';
import { serviceEntryAnalyzer } from './service-entry-analyzer.js';

const entry = (name: string, ports: object[], extra: object = {}): object =>
  meshObject('ServiceEntry', name, 'shop', { hosts: [`${name}.example.com`], resolution: 'DNS', ports, ...extra });

describe('serviceentry.Analyzer (MSH0134)', () => {
  const entries = [
    entry('https', [{ number: 443, name: 'https', protocol: 'HTTPS' }]),
    entry('tcp-with-address', [{ number: 5432, name: 'pg', protocol: 'TCP' }], { addresses: ['192.0.2.1'] }),
    entry('unset', [{ number: 5432, name: 'pg' }]),
    entry('empty', [{ number: 5432, name: 'pg', protocol: '' }]),
    entry('tcp', [
      { number: 5432, name: 'pg', protocol: 'TCP' },
      { number: 6379, name: 'redis', protocol: 'TCP' },
      { number: 80, name: 'http', protocol: 'HTTP' },
    ]),
  ];

  test('an address-less entry with a TCP or unset port warns (the same message once per entry); HTTPS, or addresses, stay quiet', () => {
    expect(analyze(serviceEntryAnalyzer, entries)).toEqual([
      'Warning [MSH0134] (ServiceEntry empty.shop) ServiceEntry addresses are required for this protocol.',
      'Warning [MSH0134] (ServiceEntry tcp.shop) ServiceEntry addresses are required for this protocol.',
      'Warning [MSH0134] (ServiceEntry unset.shop) ServiceEntry addresses are required for this protocol.',
    ]);
  });

  test('quiet when proxies capture DNS and allocate addresses; capture alone is not enough', () => {
    const withMetadata = (proxyMetadata: Record<string, string>) => ({
      meshConfig: { ...DEFAULT_MESH_CONFIG, defaultConfig: { ...DEFAULT_MESH_CONFIG.defaultConfig, proxyMetadata } },
    });
    expect(analyze(serviceEntryAnalyzer, entries, withMetadata({ MESH_META_DNS_CAPTURE: 'true', MESH_META_DNS_AUTO_ALLOCATE: 'true' }))).toEqual([]);
    expect(analyze(serviceEntryAnalyzer, entries, withMetadata({ MESH_META_DNS_CAPTURE: 'true' }))).toHaveLength(3);
  });
});
