import { spawnSync } from 'node:child_process';
import { describe, expect, test } from '@jest/globals';
import { errorMessage, MeshError } from '../../runtime/index.js';
import { applyIptablesRules } from './apply-rules.js';
import { buildIptablesRules } from './build-rules.js';
import { captureConfigFromFlags } from './capture-config.js';
import { cleanupConfigFromFlags, runCleanup } from './cleanup.js';
import { restoreSections, rulesCases, rulesGolden } from './testing/golden.js';
import { iptablesInstalled, newPrivateNetns, privateNetnsUnavailable, type PrivateNetns } from './testing/private-netns.js';
import { RuleSetBuilder } from './rule-set.js';

const unavailable = privateNetnsUnavailable();
const describeReal = unavailable === undefined ? describe : describe.skip;
if (unavailable) console.warn(`skipped: loading the golden rules for real (${unavailable})`);
const cases = rulesCases();
// A round trip through apply and clean-up costs a few hundred milliseconds: the plainest case, a
// custom TPROXY mark, and the one with every feature (TPROXY, DNS servers, IPv6, virtual interfaces).
const roundTripCases = cases.filter(({ name }) => ['defaults', 'tproxy-ports-mark-table', 'everything'].includes(name));

async function inNetns<T>(body: (netns: PrivateNetns) => Promise<T>): Promise<T> {
  const netns = await newPrivateNetns();
  try {
    return await body(netns);
  } finally {
    await netns.close();
  }
}

async function saved(netns: PrivateNetns): Promise<{ ipv4: string; ipv6: string }> {
  const [ipv4, ipv6] = await Promise.all([netns.run(['iptables-save']), netns.run(['ip6tables-save'])]);
  return { ipv4: ipv4.stdout, ipv6: ipv6.stdout };
}

const ruleLines = (save: string): string[] => save.split('\n').filter((line) => line.startsWith('-A '));

describeReal(`real iptables in a private network namespace${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  test('Debian iptables is installed (apt-get install -y iptables)', () => {
    expect(iptablesInstalled()).toBe(true);
  });

  test.each(cases)('$name: every section of the golden restore file loads', ({ name }) => {
    const sections = restoreSections(rulesGolden(name).restore);
    expect(sections.length).toBeGreaterThan(0);
    for (const { command, input } of sections) {
      const result = spawnSync('unshare', ['-n', command, '--noflush'], { input, encoding: 'utf8' });
      expect({ command, code: result.status, stderr: result.stderr }).toEqual({ command, code: 0, stderr: '' });
    }
  });

  test.each(roundTripCases)('$name: applied, every rule is in force; cleaned up, none of ours is left', async ({ name, flags, nameServers }) => {
    await inNetns(async (netns) => {
      const rules = buildIptablesRules(captureConfigFromFlags(flags, nameServers));
      await applyIptablesRules(rules, netns.run);
      const applied = await saved(netns);
      expect(ruleLines(applied.ipv4)).toHaveLength(rules.ipv4.rules.length);
      expect(ruleLines(applied.ipv6)).toHaveLength(rules.ipv6.rules.length);

      const cleanup = cleanupConfigFromFlags({ proxyUid: flags.proxyUid, proxyGid: flags.proxyGid, redirectDns: flags.redirectDns }, nameServers);
      const outcome = await runCleanup(cleanup, netns.run);
      expect(outcome.ran).toBeGreaterThan(outcome.failed);
      const left = await saved(netns);
      expect(left.ipv4 + left.ipv6).not.toContain('MESH_');
      // Clean-up has no flag for a TPROXY mark or virtual interfaces: rules with another mark and the
      // RETURN for each virtual interface stay (as with the reference); nothing else does.
      const leftRules = [...ruleLines(left.ipv4), ...ruleLines(left.ipv6)];
      const expectedLeft = (line: string): boolean =>
        (name === 'tproxy-ports-mark-table' && line.includes('0x800')) ||
        (flags.orchVirtInterfaces !== undefined && /^-A PREROUTING -i \S+ -j RETURN$/.test(line));
      expect(leftRules.filter((line) => !expectedLeft(line))).toEqual([]);
    });
  });

  test('applying twice succeeds: our chains are emptied and refilled, existing routes are kept', async () => {
    await inNetns(async (netns) => {
      const rules = buildIptablesRules(captureConfigFromFlags({ meshInboundInterceptionMode: 'TPROXY', meshInboundPorts: '*', meshServiceCidr: 'fd00::/8' }));
      await applyIptablesRules(rules, netns.run);
      await applyIptablesRules(rules, netns.run);
      const outbound = ruleLines((await saved(netns)).ipv4).filter((line) => line.startsWith('-A MESH_OUTPUT'));
      expect(outbound).toHaveLength(rules.ipv4.rules.filter((r) => r.chain === 'MESH_OUTPUT').length);
    });
  });

  test('a rule iptables rejects fails the apply, naming the command and its error', async () => {
    await inNetns(async (netns) => {
      const broken = new RuleSetBuilder('ipv4').append('nat', 'OUTPUT', '-p', 'tcp', '-j', 'NO_SUCH_CHAIN').build();
      const error = await applyIptablesRules({ ipv4: broken, ipv6: new RuleSetBuilder('ipv6').build() }, netns.run).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(MeshError);
      expect((error as MeshError).code).toBe('iptables-command-failed');
      expect(errorMessage(error)).toMatch(/^"iptables-restore --noflush" failed with exit code \d+: .*NO_SUCH_CHAIN/s);
      // Nothing was half applied.
      expect(ruleLines((await saved(netns)).ipv4)).toEqual([]);
    });
  });
});
