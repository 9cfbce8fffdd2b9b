import { SettingsError } from '../../runtime/index.js';

/** A foreign trust domain and the HTTPS URL of its SPIFFE bundle endpoint. */
export interface BundleEndpoint {
  readonly trustDomain: string;
  readonly url: string;
}

const TRUST_DOMAIN = /^[a-z0-9._-]+$/;
const FORMAT = '<trust domain>|<https URL> tuples separated by "||"';

/**
 * Parses SPIFFE_BUNDLE_ENDPOINTS: `td1|https://host/bundle||td2|https://other/bundle`. An
 * endpoint without a scheme gets `https://`; plain HTTP is refused, since whoever can change
 * a bundle in flight can mint identities of that domain. Throws a SettingsError naming the
 * setting and the bad tuple.
 */
export function parseSpiffeBundleEndpoints(raw: string): BundleEndpoint[] {
  if (raw.trim() === '') return [];
  function fail(problem: string): never {
    throw new SettingsError([{ name: 'SPIFFE_BUNDLE_ENDPOINTS', value: raw, expected: `${FORMAT}; ${problem}` }]);
  }
  const out: BundleEndpoint[] = [];
  raw.split('||').forEach((tuple, index) => {
    const parts = tuple.split('|').map((p) => p.trim());
    const where = `tuple ${index + 1} ${JSON.stringify(tuple)}`;
    if (parts.length !== 2) fail(`${where} is not <trust domain>|<URL>`);
    const [trustDomain = '', endpoint = ''] = parts;
    if (!TRUST_DOMAIN.test(trustDomain)) fail(`${where} has an invalid trust domain`);
    if (out.some((e) => e.trustDomain === trustDomain)) fail(`${where} repeats trust domain ${trustDomain}`);
    let url: URL;
    try {
      url = new URL(endpoint.includes('://') ? endpoint : `https://${endpoint}`);
    } catch {
      fail(`${where} has an invalid URL`);
    }
    if (url.protocol !== 'https:' || url.hostname === '') fail(`${where} must use https`);
    out.push({ trustDomain, url: url.toString() });
  });
  return out;
}
