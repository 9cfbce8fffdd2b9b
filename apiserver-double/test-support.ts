/** Helpers shared by this folder's tests only. */

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
