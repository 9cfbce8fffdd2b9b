/** True when every selector label is present in `labels` with the same value (an empty selector selects all). */
export function matchesLabels(
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
): boolean {
  for (const key in selector) {
    if (labels[key] !== selector[key]) return false;
  }
  return true;
}
