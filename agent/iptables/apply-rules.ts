import { MeshError } from '../../runtime/index.js';
import type { IptablesRules } from './build-rules.js';
import type { CommandResult, CommandRunner } from './command-runner.js';
import { formatArgs, renderRestore, restoreCommand } from './render.js';
import type { RuleSet } from './rule-set.js';

export class IptablesCommandError extends MeshError<'iptables-command-failed'> {
  constructor(
    readonly argv: readonly string[],
    readonly result: CommandResult,
  ) {
    const stderr = result.stderr.trim();
    super('iptables-command-failed', `"${formatArgs(argv)}" failed with exit code ${result.code}${stderr ? `: ${stderr}` : ''}`);
  }
}

/**
 * Applies the rules: for each family that has any, its `ip` commands, then its whole rule set in
 * one `iptables-restore --noflush` (or `ip6tables-restore`) with the rules on standard input, so a
 * bad rule leaves nothing half applied. The first failure stops and names the command.
 */
export async function applyIptablesRules(rules: IptablesRules, run: CommandRunner): Promise<void> {
  for (const ruleSet of [rules.ipv4, rules.ipv6]) await applyRuleSet(ruleSet, run);
}

async function applyRuleSet(ruleSet: RuleSet, run: CommandRunner): Promise<void> {
  for (const argv of ruleSet.ipCommands) {
    const result = await run(argv);
    // A route, rule or address left by an earlier run is what we want: apply again without failing.
    if (result.code !== 0 && !/file exists|already assigned/i.test(result.stderr)) throw new IptablesCommandError(argv, result);
  }
  const restore = renderRestore(ruleSet);
  if (restore === '') return;
  const argv = restoreCommand(ruleSet.family);
  const result = await run(argv, restore);
  if (result.code !== 0) throw new IptablesCommandError(argv, result);
}
