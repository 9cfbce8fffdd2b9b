import { describe, expect, test } from '@jest/globals';
import { checkUpgradeEligible } from './upgrade.js';

describe('upgrade eligibility', () => {
  test('the same or the next minor version is eligible; a development build is let through', () => {
    expect(() => checkUpgradeEligible('1.10.3', '1.10.4', false)).not.toThrow();
    expect(() => checkUpgradeEligible('1.10.3', '1.11.0', false)).not.toThrow();
    expect(() => checkUpgradeEligible('', '1.11.0', false)).not.toThrow();
    expect(() => checkUpgradeEligible('1.10.0', 'dev', false)).not.toThrow();
  });

  test('a downgrade or a skipped minor version is refused unless forced', () => {
    expect(() => checkUpgradeEligible('1.11.0', '1.10.9', false)).toThrow(
      'upgrade from 1.11.0 to 1.10.9 is a downgrade: use meshctl install for it, or --force',
    );
    expect(() => checkUpgradeEligible('1.9.0', '1.11.0', false)).toThrow(
      'upgrade from 1.9.0 to 1.11.0 skips a minor version: upgrade one minor version at a time, or use --force',
    );
    expect(() => checkUpgradeEligible('1.9.0', '2.0.0', false)).toThrow(/skips a minor version/);
    expect(() => checkUpgradeEligible('1.9.0', '1.11.0', true)).not.toThrow();
  });
});
