import { fileURLToPath } from 'node:url';
import { goldenCases, readCaseInput, readGolden } from '../../../testing/golden.js';
import type { CaptureFlagValues } from '../capture-config.js';
import type { CleanupFlagValues } from '../cleanup.js';

/**
 * Test support: the golden cases of the capture rules (`testdata/rules/`) and of their clean-up
 * (`testdata/cleanup/`), each `<case>.in.yaml` (flags, the same flags on the command line, the
 * resolv.conf name servers) beside `<case>.golden.yaml` (what the commands print).
 */
export const RULES_DIR = fileURLToPath(new URL('../testdata/rules/', import.meta.url));
export const CLEANUP_DIR = fileURLToPath(new URL('../testdata/cleanup/', import.meta.url));

interface CaseInput<Flags> {
  readonly flags: Flags;
  /** The same case on the command line. */
  readonly args: readonly string[];
  /** resolv.conf name servers, for DNS capture of listed servers. */
  readonly nameServers?: readonly string[];
}

export type RulesCase = CaseInput<CaptureFlagValues> & { readonly name: string };
export type CleanupCase = CaseInput<CleanupFlagValues> & { readonly name: string };

/** What `mesh-iptables --dry-run` prints: the command list, and the `--restore-format` input. */
export interface RulesGolden {
  readonly commands: string;
  readonly restore: string;
}

/** What `mesh-clean-iptables --dry-run` prints. */
export interface CleanupGolden {
  readonly commands: string;
}

export function rulesCases(): RulesCase[] {
  return goldenCases(RULES_DIR).map((name) => ({ name, ...readCaseInput<CaseInput<CaptureFlagValues>>(RULES_DIR, name) }));
}

export function cleanupCases(): CleanupCase[] {
  return goldenCases(CLEANUP_DIR).map((name) => ({ name, ...readCaseInput<CaseInput<CleanupFlagValues>>(CLEANUP_DIR, name) }));
}

export function rulesGolden(name: string): RulesGolden {
  return readGolden<RulesGolden>(RULES_DIR, name);
}

export function cleanupGolden(name: string): CleanupGolden {
  return readGolden<CleanupGolden>(CLEANUP_DIR, name);
}

/** Splits `--restore-format` output into what each restore command is fed. */
export function restoreSections(output: string): Array<{ command: string; input: string }> {
  const sections: Array<{ command: string; input: string }> = [];
  for (const line of output.split('\n')) {
    const header = /^# (ip6?tables-restore) --noflush$/.exec(line);
    if (header) sections.push({ command: header[1] as string, input: '' });
    else if (sections.length > 0 && line !== '') (sections[sections.length - 1] as { input: string }).input += `${line}\n`;
  }
  return sections;
}
