import { describe, expect, test } from '@jest/globals';
import { buildIptablesRules, type IptablesRules } from './build-rules.js';
import { captureConfigFromFlags, type CaptureFlagValues } from './capture-config.js';
import { MESH_CHAINS } from './constants.js';
import { expectGolden } from '../../testing/golden.js';
import { RULES_DIR, restoreSections, rulesCases } from './testing/golden.js';
import { renderCommandList, renderCommands, renderRestore, renderRestoreOutput } from './render.js';
import type { RuleSet } from './rule-set.js';

const cases = rulesCases();

function build(flags: CaptureFlagValues, nameServers: readonly string[] = []): IptablesRules {
  return buildIptablesRules(captureConfigFromFlags(flags, nameServers));
}

function lines(ruleSet: RuleSet): string[] {
  return renderCommands(ruleSet).map((argv) => argv.join(' '));
}

describe('golden outputs', () => {
  test('cover at least a dozen flag combinations', () => {
    expect(cases.length).toBeGreaterThanOrEqual(12);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  describe.each(cases)('$name', ({ name, flags, nameServers }) => {
    const rules = build(flags, nameServers);

    test('dry-run command list and restore format', () =>
      expectGolden(RULES_DIR, name, { commands: renderCommandList(rules), restore: renderRestoreOutput(rules) }));

    test('every jump to one of our chains has the chain declared in that table', () => {
      for (const ruleSet of [rules.ipv4, rules.ipv6]) {
        for (const rule of ruleSet.rules) {
          const target = rule.spec[rule.spec.indexOf('-j') + 1] ?? '';
          if (!target.startsWith('MESH_')) continue;
          expect(MESH_CHAINS).toContain(target);
          expect(ruleSet.chains).toContainEqual({ table: rule.table, chain: target });
        }
      }
    });

    test('inserts are kept only for built-in chains; our chains read in final order', () => {
      for (const rule of [...rules.ipv4.rules, ...rules.ipv6.rules]) {
        if (rule.insertAt !== undefined) expect(['PREROUTING', 'OUTPUT']).toContain(rule.chain);
      }
    });

    test('the restore output has one section per family with rules', () => {
      const sections = restoreSections(renderRestoreOutput(rules));
      expect(sections.map((s) => s.command)).toEqual(rules.ipv6.rules.length > 0 ? ['iptables-restore', 'ip6tables-restore'] : ['iptables-restore']);
      expect(sections[0]?.input).toContain(renderRestore(rules.ipv4));
    });
  });
});

describe('rule semantics', () => {
  test('the defaults capture nothing inbound, jump outbound traffic to MESH_OUTPUT and exempt UID and GID 1337', () => {
    const v4 = lines(build({}).ipv4);
    expect(v4.filter((l) => l.includes('PREROUTING'))).toEqual([]);
    expect(v4).toContain('iptables -t nat -A OUTPUT -p tcp -j MESH_OUTPUT');
    expect(v4).toContain('iptables -t nat -A MESH_OUTPUT -m owner --uid-owner 1337 -j RETURN');
    expect(v4).toContain('iptables -t nat -A MESH_OUTPUT -m owner --gid-owner 1337 -j RETURN');
    expect(v4.filter((l) => l.endsWith('-j MESH_REDIRECT'))).toEqual([]);
  });

  test('the tunnel port is returned first in every inbound chain, nat and (TPROXY) mangle', () => {
    const redirect = lines(build({ meshInboundPorts: '*' }).ipv4).filter((l) => l.includes('-A MESH_INBOUND'));
    expect(redirect[0]).toBe('iptables -t nat -A MESH_INBOUND -p tcp --dport 15008 -j RETURN');
    const tproxy = lines(build({ meshInboundPorts: '*', meshInboundInterceptionMode: 'TPROXY' }).ipv4);
    const mangleInbound = tproxy.filter((l) => l.startsWith('iptables -t mangle -A MESH_INBOUND'));
    // The three mark and loopback exemptions come first, then the tunnel port, then SSH.
    expect(mangleInbound.slice(0, 5)).toEqual([
      'iptables -t mangle -A MESH_INBOUND -p tcp -m mark --mark 1337 -j RETURN',
      'iptables -t mangle -A MESH_INBOUND -p tcp -s 127.0.0.6/32 -i lo -j RETURN',
      'iptables -t mangle -A MESH_INBOUND -p tcp -i lo -m mark ! --mark 1338 -j RETURN',
      'iptables -t mangle -A MESH_INBOUND -p tcp --dport 15008 -j RETURN',
      'iptables -t mangle -A MESH_INBOUND -p tcp --dport 22 -j RETURN',
    ]);
  });

  test('custom ports reach the REDIRECT targets', () => {
    const v4 = lines(build({ proxyPort: '16001', inboundCapturePort: '16006', inboundTunnelPort: '16008' }).ipv4);
    expect(v4).toContain('iptables -t nat -A MESH_REDIRECT -p tcp -j REDIRECT --to-ports 16001');
    expect(v4).toContain('iptables -t nat -A MESH_IN_REDIRECT -p tcp -j REDIRECT --to-ports 16006');
    expect(v4).toContain('iptables -t nat -A MESH_INBOUND -p tcp --dport 16008 -j RETURN');
  });

  test('TPROXY sets up policy routing with the mark and table', () => {
    const rules = build({ meshInboundPorts: '80', meshInboundInterceptionMode: 'TPROXY', meshInboundTproxyMark: '7', meshInboundTproxyRouteTable: '70' });
    expect(rules.ipv4.ipCommands).toEqual([
      ['ip', '-f', 'inet', 'rule', 'add', 'fwmark', '7', 'lookup', '70'],
      ['ip', '-f', 'inet', 'route', 'add', 'local', 'default', 'dev', 'lo', 'table', '70'],
    ]);
    expect(lines(rules.ipv4)).toContain('iptables -t mangle -A MESH_TPROXY ! -d 127.0.0.1/32 -p tcp -j TPROXY --tproxy-mark 7/0xffffffff --on-port 15006');
  });

  test('TPROXY without inbound ports adds no routing and no marks', () => {
    const rules = build({ meshInboundInterceptionMode: 'TPROXY' });
    expect(rules.ipv4.ipCommands).toEqual([]);
    expect(rules.ipv4.rules.filter((r) => r.table === 'mangle')).toEqual([]);
  });

  test.each([
    ['no IPv6 range', { meshServiceCidr: '*' }, false],
    ['an IPv6 range to capture', { meshServiceCidr: '10.0.0.0/8,fd00::/8' }, true],
    ['an IPv6 range to exclude', { meshServiceCidr: '*', meshServiceExcludeCidr: 'fd00::/8' }, true],
  ])('IPv6 rules are built only with IPv6 ranges: %s', (_name, flags: CaptureFlagValues, ipv6) => {
    const rules = build(flags);
    expect(rules.ipv6.rules.length > 0).toBe(ipv6);
    if (ipv6) expect(rules.ipv6.ipCommands[0]).toEqual(['ip', '-6', 'addr', 'add', '::6/128', 'dev', 'lo']);
    else expect(rules.ipv6.ipCommands).toEqual([]);
  });

  test('each family gets only its own ranges', () => {
    const rules = build({ meshServiceCidr: '10.0.0.0/8,2001:db8::/32', meshServiceExcludeCidr: '10.1.0.0/16,2001:db8:1::/48' });
    const v4 = lines(rules.ipv4).join('\n');
    const v6 = lines(rules.ipv6).join('\n');
    expect(v4).toContain('-d 10.0.0.0/8 -j MESH_REDIRECT');
    expect(v4).toContain('-d 10.1.0.0/16 -j RETURN');
    expect(v4).not.toContain('2001:db8');
    expect(v6).toContain('-d 2001:db8::/32 -j MESH_REDIRECT');
    expect(v6).toContain('-d 2001:db8:1::/48 -j RETURN');
    expect(v6).toContain('-d ::1/128 -j RETURN');
    expect(v6).not.toContain('10.0.0.0');
  });

  test('a CIDR list ends with a RETURN so other destinations pass untouched; a wildcard redirects them', () => {
    expect(lines(build({ meshServiceCidr: '10.0.0.0/8' }).ipv4).at(-1)).toBe('iptables -t nat -A MESH_OUTPUT -j RETURN');
    expect(lines(build({ meshServiceCidr: '*' }).ipv4).at(-1)).toBe('iptables -t nat -A MESH_OUTPUT -j MESH_REDIRECT');
  });

  test('a loopback range to capture drops the rule that lets the app call itself over lo', () => {
    const withLoopback = lines(build({ meshServiceCidr: '127.0.0.1/32' }).ipv4);
    const without = lines(build({ meshServiceCidr: '10.0.0.0/8' }).ipv4);
    const appToSelf = 'iptables -t nat -A MESH_OUTPUT -o lo -m owner ! --uid-owner 1337 -j RETURN';
    expect(without).toContain(appToSelf);
    expect(withLoopback).not.toContain(appToSelf);
  });

  test('DNS capture needs --redirect-dns and either --capture-all-dns or a name server', () => {
    const dnsRules = (rules: IptablesRules): string[] => lines(rules.ipv4).filter((l) => l.includes('15053'));
    expect(dnsRules(build({ captureAllDns: true }))).toEqual([]);
    expect(dnsRules(build({ redirectDns: true }))).toEqual([]);
    expect(dnsRules(build({ redirectDns: true }, ['10.0.0.10']))).toContain(
      'iptables -t nat -A OUTPUT -p udp --dport 53 -d 10.0.0.10/32 -j REDIRECT --to-ports 15053',
    );
    expect(dnsRules(build({ redirectDns: true, captureAllDns: true }, ['10.0.0.10']))).toContain(
      'iptables -t nat -A OUTPUT -p udp --dport 53 -j REDIRECT --to-ports 15053',
    );
  });

  test('with DNS capture the owner rules let TCP port 53 through to the DNS rules', () => {
    const v4 = lines(build({ redirectDns: true, captureAllDns: true }).ipv4);
    expect(v4).toContain('iptables -t nat -A MESH_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 53 -m owner --uid-owner 1337 -j MESH_IN_REDIRECT');
    expect(v4).toContain('iptables -t nat -A MESH_OUTPUT -o lo -p tcp ! --dport 53 -m owner ! --gid-owner 1337 -j RETURN');
    expect(v4.indexOf('iptables -t nat -A MESH_OUTPUT -p tcp --dport 53 -j REDIRECT --to-ports 15053')).toBeLessThan(
      v4.indexOf('iptables -t nat -A MESH_OUTPUT -d 127.0.0.1/32 -j RETURN'),
    );
  });

  test('virtual interfaces are returned for inbound and redirected as outbound, the redirect inserted ahead', () => {
    const prerouting = build({ orchVirtInterfaces: 'eth1', meshServiceCidr: '*' }).ipv4.rules.filter((r) => r.chain === 'PREROUTING');
    expect(prerouting.map((r) => [r.insertAt, r.spec.join(' ')])).toEqual([
      [1, '-i eth1 -j RETURN'],
      [1, '-i eth1 -j MESH_REDIRECT'],
    ]);
  });
});
