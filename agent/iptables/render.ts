import type { IpFamily } from './cidr.js';
import type { IptablesRules } from './build-rules.js';
import { TABLE_ORDER, type IptablesRule, type RuleSet } from './rule-set.js';

export function iptablesCommand(family: IpFamily): 'iptables' | 'ip6tables' {
  return family === 'ipv4' ? 'iptables' : 'ip6tables';
}

export function restoreCommand(family: IpFamily): string[] {
  // --noflush keeps the rules others put in the built-in chains.
  return [`${iptablesCommand(family)}-restore`, '--noflush'];
}

/**
 * `iptables-restore` input: one `*table … COMMIT` block per table that has rules, our chains
 * declared (and so emptied) at its top. Empty when the rule set has no rules.
 */
export function renderRestore(ruleSet: RuleSet): string {
  const lines: string[] = [];
  for (const table of TABLE_ORDER) {
    const chains = ruleSet.chains.filter((c) => c.table === table);
    const rules = ruleSet.rules.filter((r) => r.table === table);
    if (chains.length === 0 && rules.length === 0) continue;
    lines.push(`*${table}`);
    for (const { chain } of chains) lines.push(`:${chain} - [0:0]`);
    for (const rule of rules) lines.push(ruleArgs(rule).join(' '));
    lines.push('COMMIT');
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** The same rules as individual commands: `ip` set-up, then chain creation, then the rules in order. */
export function renderCommands(ruleSet: RuleSet): string[][] {
  const command = iptablesCommand(ruleSet.family);
  return [
    ...ruleSet.ipCommands.map((args) => [...args]),
    ...ruleSet.chains.map(({ table, chain }) => [command, '-t', table, '-N', chain]),
    ...ruleSet.rules.map((rule) => [command, '-t', rule.table, ...ruleArgs(rule)]),
  ];
}

function ruleArgs(rule: IptablesRule): string[] {
  const position = rule.insertAt === undefined ? ['-A', rule.chain] : ['-I', rule.chain, String(rule.insertAt)];
  return [...position, ...rule.spec];
}

/** One command line; arguments a POSIX shell would split or expand are single-quoted. */
export function formatArgs(args: readonly string[]): string {
  return args.map((arg) => (/^[\w./:,=@%+!-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)).join(' ');
}

/** What `mesh-iptables --dry-run` prints: every command, IPv4 then IPv6, one a line. */
export function renderCommandList(rules: IptablesRules): string {
  return [rules.ipv4, rules.ipv6].flatMap((ruleSet) => renderCommands(ruleSet).map((argv) => `${formatArgs(argv)}\n`)).join('');
}

/**
 * What `mesh-iptables --restore-format` prints: per family, its `ip` commands as comments, then a
 * header naming the restore command and its input. Each section from its header on is valid
 * restore input as it stands.
 */
export function renderRestoreOutput(rules: IptablesRules): string {
  let text = '';
  for (const ruleSet of [rules.ipv4, rules.ipv6]) {
    const restore = renderRestore(ruleSet);
    if (restore === '' && ruleSet.ipCommands.length === 0) continue;
    for (const argv of ruleSet.ipCommands) text += `# ${formatArgs(argv)}\n`;
    text += `# ${restoreCommand(ruleSet.family).join(' ')}\n${restore}`;
  }
  return text;
}
