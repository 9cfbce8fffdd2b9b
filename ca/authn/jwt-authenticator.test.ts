import { describe, expect, test } from '@jest/globals';
import { parseJwtRule } from './jwt-authenticator.js';
import { jwtRuleFromSettings } from '../ca-settings.js';
import { daemonSettings } from '../testing/test-support.js';

describe('OIDC rules', () => {
  test('JWT_RULE wins over TOKEN_ISSUER and AUDIENCE', () => {
    const settings = daemonSettings({
      JWT_RULE: '{"issuer": "https://issuer.example", "audiences": ["a", "b"], "jwks_uri": "https://issuer.example/keys"}',
      TOKEN_ISSUER: 'https://other.example',
      AUDIENCE: 'c',
    });
    expect(jwtRuleFromSettings(settings)).toEqual({ issuer: 'https://issuer.example', audiences: ['a', 'b'], jwksUri: 'https://issuer.example/keys' });
  });

  test('TOKEN_ISSUER with AUDIENCE; nothing set means no OIDC authenticator', () => {
    expect(jwtRuleFromSettings(daemonSettings({ TOKEN_ISSUER: 'https://i.example', AUDIENCE: 'x, y' }))).toEqual({
      issuer: 'https://i.example',
      audiences: ['x', 'y'],
    });
    expect(jwtRuleFromSettings(daemonSettings())).toBeUndefined();
    expect(() => jwtRuleFromSettings(daemonSettings({ TOKEN_ISSUER: 'https://i.example' }))).toThrow(/AUDIENCE/);
  });

  test.each([
    ['not JSON', '{', /not JSON/],
    ['no issuer', '{"audiences": ["a"]}', /issuer/],
    ['no audiences', '{"issuer": "https://i"}', /audiences/],
    ['empty audience', '{"issuer": "https://i", "audiences": [""]}', /audiences/],
  ])('a bad JWT_RULE is refused: %s', (_name, text, message) => {
    expect(() => parseJwtRule(text)).toThrow(message);
  });
});
