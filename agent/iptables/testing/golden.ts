import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CaptureFlagValues } from '../capture-config.js';

/** Test support: the golden cases of `testdata/golden-cases.json` and their files. */

export const TESTDATA_DIR = fileURLToPath(new URL('../testdata/', import.meta.url));

export interface GoldenCase {
  readonly name: string;
  readonly flags: CaptureFlagValues;
  /** The same case on the `mesh-iptables` command line. */
  readonly args: readonly string[];
  /** resolv.conf name servers, for DNS capture of listed servers. */
  readonly nameServers?: readonly string[];
}

export function goldenCases(): GoldenCase[] {
  return JSON.parse(readFileSync(join(TESTDATA_DIR, 'golden-cases.json'), 'utf8')) as GoldenCase[];
}

export function readGolden(file: string): string {
  return readFileSync(join(TESTDATA_DIR, file), 'utf8');
}

/** Rewrites `testdata/<file>` (tests do so when run with REFRESH_GOLDEN=1). */
export function writeGolden(file: string, actual: string): void {
  writeFileSync(join(TESTDATA_DIR, file), actual);
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
