/** Helpers shared by this folder's tests only. */

/** Polls `predicate` until it holds; fails after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The `Status` body of a client-node ApiException (or of a raw response body). */
export function statusOf(err: unknown): { code?: number; reason?: string; message?: string; details?: Record<string, unknown> } {
  const body = (err as { body?: unknown }).body;
  if (typeof body === 'string') return JSON.parse(body) as ReturnType<typeof statusOf>;
  return (body ?? {}) as ReturnType<typeof statusOf>;
}

/** Calls `fn`, expecting it to fail with an API error; returns that error's Status. */
export async function expectStatus(fn: () => Promise<unknown>): Promise<ReturnType<typeof statusOf> & { httpCode: number }> {
  try {
    await fn();
  } catch (err) {
    return { ...statusOf(err), httpCode: (err as { code?: number }).code ?? 0 };
  }
  throw new Error('expected the call to fail');
}
