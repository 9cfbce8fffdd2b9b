/**
 * A message's JSON text as the key of its content: equal text, equal message, except where JSON
 * folds values together (NaN and the infinities print as `null`, functions and `undefined` are
 * dropped), so a text holding `null` gives no key, and neither does a value JSON cannot write.
 * The caller rules out functions where a message may hold one.
 */
export function contentText(value: unknown): string | undefined {
  try {
    const text = JSON.stringify(value) as string | undefined;
    return text === undefined || text.includes('null') ? undefined : text;
  } catch {
    return undefined;
  }
}
