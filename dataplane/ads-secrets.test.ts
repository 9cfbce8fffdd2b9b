import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { certificateAuthority, signedCertificate } from '../testing/openssl.js';
import { newAdsSecrets } from './ads-secrets.js';

let dir: string;
let pem: { ca: string; cert: string; key: string; otherKey: string };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mesh-ads-secrets-'));
  const ca = await certificateAuthority(dir, 'ca');
  const [leaf, other] = await Promise.all([signedCertificate(dir, 'leaf', 'DNS:a.example.com', ca), signedCertificate(dir, 'other', 'DNS:b.example.com', ca)]);
  pem = {
    ca: await readFile(ca.certFile, 'utf8'),
    cert: await readFile(leaf.certFile, 'utf8'),
    key: await readFile(leaf.keyFile, 'utf8'),
    otherKey: await readFile(other.keyFile, 'utf8'),
  };
});

afterAll(() => rm(dir, { recursive: true, force: true }));

const bytes = (text: string): string => Buffer.from(text).toString('base64');
const certificate = (name: string, cert: string, key: string) => ({
  name,
  tls_certificate: { certificate_chain: { inline_bytes: bytes(cert) }, private_key: { inline_bytes: bytes(key) } },
});
const ca = (name: string, bundle: string) => ({ name, validation_context: { trusted_ca: { inline_bytes: bytes(bundle) } } });
const agent = { certificates: new Map([['default', { certificateChain: 'chain', privateKey: 'key' }]]), trustedCas: new Map([['ROOTCA', 'roots']]) };

describe('secrets over the ADS stream in the data plane', () => {
  test('the names come from SdsSecretConfigs with an ads config source only', () => {
    const listener = {
      filter_chains: [
        {
          transport_socket: {
            typed_config: {
              common_tls_context: {
                tls_certificate_sds_secret_configs: [
                  { name: 'kubernetes://a', sds_config: { ads: {} } },
                  { name: 'default', sds_config: { api_config_source: {} } },
                ],
                combined_validation_context: {
                  validation_context_sds_secret_config: { name: 'kubernetes://a-cacert', sds_config: { ads: {}, resource_api_version: 'V3' } },
                },
              },
            },
          },
        },
      ],
    };
    expect(newAdsSecrets().namesFor([[listener], []])).toEqual(['kubernetes://a', 'kubernetes://a-cacert']);
  });

  test('accepted secrets are merged with the agent’s; names no longer subscribed are dropped', () => {
    const secrets = newAdsSecrets();
    expect(
      secrets.apply([certificate('kubernetes://a', pem.cert, pem.key), ca('kubernetes://a-cacert', pem.ca)], ['kubernetes://a', 'kubernetes://a-cacert']),
    ).toEqual({ ok: true });
    const merged = secrets.merged(agent);
    expect([...merged.certificates.keys()].sort()).toEqual(['default', 'kubernetes://a']);
    expect(merged.trustedCas.get('kubernetes://a-cacert')).toBe(pem.ca);
    expect(secrets.apply([], ['kubernetes://a'])).toEqual({ ok: true });
    expect(secrets.merged(agent).trustedCas.has('kubernetes://a-cacert')).toBe(false);
    expect(secrets.merged(agent).certificates.has('kubernetes://a')).toBe(true);
  });

  test.each([
    ['a key of another certificate', () => certificate('kubernetes://a', pem.cert, pem.otherKey), 'does not match'],
    ['an unparsable certificate', () => certificate('kubernetes://a', 'junk', pem.key), 'certificate_chain'],
    ['an unparsable key', () => certificate('kubernetes://a', pem.cert, 'junk'), 'private_key'],
    [
      'a certificate without a key',
      () => ({ name: 'kubernetes://a', tls_certificate: { certificate_chain: { inline_bytes: bytes(pem.cert) } } }),
      'private_key',
    ],
    ['an unparsable CA', () => ca('kubernetes://a-cacert', 'junk'), 'trusted_ca'],
  ])('%s is rejected (a NACK) and the last good secrets keep serving', (_name, bad, words) => {
    const secrets = newAdsSecrets();
    secrets.apply([certificate('kubernetes://a', pem.cert, pem.key)], ['kubernetes://a', 'kubernetes://a-cacert']);
    const result = secrets.apply([bad()], ['kubernetes://a', 'kubernetes://a-cacert']);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(words);
    expect(secrets.merged(undefined).certificates.get('kubernetes://a')?.privateKey).toBe(pem.key);
  });
});
