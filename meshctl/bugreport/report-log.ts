/** A pod's log, with how many lines matched `--critical-errs` (and no `--ignore-errs`). */
export interface PodCritical {
  /** `<namespace>/<pod>`. */
  readonly pod: string;
  /** Its folder in the archive. */
  readonly folder: string;
  readonly count: number;
  readonly samples: readonly string[];
}

/**
 * `bug-report.log`: first the pods whose logs hold critical errors (most first, then by name),
 * each with a few of the lines, then every other pod gathered; then the gathering's own log.
 */
export function renderReportLog(pods: readonly PodCritical[], criticalErrs: readonly string[], log: readonly string[]): string {
  const lines: string[] = [];
  const ranked = [...pods].sort((a, b) => b.count - a.count || a.pod.localeCompare(b.pod));
  const critical = ranked.filter((pod) => pod.count > 0);
  if (criticalErrs.length === 0) lines.push('Critical errors: none looked for (no --critical-errs)');
  else if (critical.length === 0) lines.push(`Critical errors (${criticalErrs.join(', ')}): none found`);
  else {
    lines.push(`Critical errors (${criticalErrs.join(', ')}): ${critical.length} pods`);
    for (const pod of critical) {
      lines.push(`  ${pod.pod}: ${pod.count} critical error lines (${pod.folder})`);
      for (const sample of pod.samples) lines.push(`    ${sample}`);
    }
  }
  const others = ranked.filter((pod) => pod.count === 0);
  if (others.length > 0) lines.push(`Other pods gathered: ${others.map((pod) => pod.pod).join(', ')}`);
  lines.push('', 'Gathering log:', ...log);
  return `${lines.join('\n')}\n`;
}
