import { formatTable } from '../kube/table.js';

/** One configurable default: where its value comes from, as `x config list` shows it. */
export interface ConfigListRow {
  readonly flag: string;
  readonly value: string;
  /** `$MESHCTL_…` when the environment set it, the MESHCONFIG file's path when that did, else `default`. */
  readonly from: string;
}

/** `FLAG  VALUE  FROM`, sorted by flag in byte order, tabwriter padding 5, as the reference prints. */
export function renderConfigList(rows: readonly ConfigListRow[]): string {
  const sorted = [...rows].sort((a, b) => (a.flag < b.flag ? -1 : a.flag > b.flag ? 1 : 0));
  return formatTable([['FLAG', 'VALUE', 'FROM'], ...sorted.map((row) => [row.flag, row.value, row.from])], 5);
}

/** One global flag as `options` prints it. */
export interface FlagUsage {
  /** `i` of `-i`, if any. */
  readonly short?: string;
  readonly long: string;
  /** `string`, `Level`; '' for a bool. */
  readonly varname: string;
  readonly usage: string;
  /** Shown as ` (default "x")` for strings and ` (default x)` otherwise, unless it is the zero value. */
  readonly defaultValue?: string | number | boolean;
}

/**
 * The reference's `options`: a heading, then pflag's flag usages: flags sorted by name, `  -i, --x
 * type` or `      --x type`, the usages aligned three spaces past the widest flag column.
 */
export function renderGlobalOptions(flags: readonly FlagUsage[]): string {
  const sorted = [...flags].sort((a, b) => (a.long < b.long ? -1 : a.long > b.long ? 1 : 0));
  const heads = sorted.map(
    (flag) => `${flag.short !== undefined ? `  -${flag.short}, --` : '      --'}${flag.long}${flag.varname !== '' ? ` ${flag.varname}` : ''}`,
  );
  const width = Math.max(0, ...heads.map((head) => head.length));
  const lines = sorted.map((flag, i) => `${(heads[i] ?? '').padEnd(width)}   ${flag.usage}${defaultText(flag)}\n`);
  return `The following options can be passed to any command:\n\n${lines.join('')}`;
}

function defaultText(flag: FlagUsage): string {
  const value = flag.defaultValue;
  if (value === undefined || value === '' || value === 0 || value === false) return '';
  return typeof value === 'string' ? ` (default ${JSON.stringify(value)})` : ` (default ${String(value)})`;
}
