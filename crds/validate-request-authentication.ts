import type { JwtRule, RequestAuthentication } from './request-authentication-schema.js';
import { checkTargetSelection } from './validate-shared.js';
import type { IssueSink, Path } from './validation-issue.js';

const JWKS_EXPECTED = 'expected a JSON Web Key Set such as {"keys": [{"kty": "RSA", ...}]}';

function checkJwksUri(sink: IssueSink, path: Path, uri: string): void {
  let url: URL | undefined;
  try {
    url = new URL(uri);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    sink.error(path, `expected an absolute http:// or https:// URL with a host, got "${uri}"`);
  }
}

function checkInlineJwks(sink: IssueSink, path: Path, jwks: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(jwks);
  } catch {
    sink.error(path, `${JWKS_EXPECTED}, got text that is not JSON`);
    return;
  }
  const keys = typeof parsed === 'object' && parsed !== null ? (parsed as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(keys)) {
    sink.error(path, `${JWKS_EXPECTED}, got no "keys" list`);
    return;
  }
  keys.forEach((key: unknown, i) => {
    const jwk = typeof key === 'object' && key !== null ? (key as Record<string, unknown>) : {};
    if (typeof jwk['kty'] !== 'string') {
      sink.error(path, `${JWKS_EXPECTED}, got key ${i} without a "kty"`);
    } else if (jwk['d'] !== undefined || jwk['kty'] === 'oct') {
      sink.warn(path, `key ${i} contains private or symmetric key material; only public keys are needed to verify tokens`);
    }
  });
}

function checkJwtRule(sink: IssueSink, path: Path, rule: JwtRule): void {
  if (rule.issuer === undefined && rule.jwksUri === undefined) {
    sink.error(path, 'expected issuer or jwksUri to be set');
  }
  if (rule.jwksUri !== undefined && rule.jwks !== undefined) {
    sink.error(path, 'only one of jwks or jwksUri may be set');
  }
  if (rule.jwksUri !== undefined) checkJwksUri(sink, [...path, 'jwksUri'], rule.jwksUri);
  if (rule.jwks !== undefined) checkInlineJwks(sink, [...path, 'jwks'], rule.jwks);
}

export function validateRequestAuthentication(sink: IssueSink, resource: RequestAuthentication): void {
  const { spec } = resource;
  checkTargetSelection(sink, ['spec'], spec);
  const issuers = new Map<string, number>();
  (spec.jwtRules ?? []).forEach((rule, i) => {
    const path = ['spec', 'jwtRules', i];
    checkJwtRule(sink, path, rule);
    if (rule.issuer === undefined) return;
    const first = issuers.get(rule.issuer);
    if (first !== undefined) {
      sink.error([...path, 'issuer'], `issuer "${rule.issuer}" is already used by jwtRules[${first}]: expected each issuer in one rule only`);
    } else {
      issuers.set(rule.issuer, i);
    }
  });
}
