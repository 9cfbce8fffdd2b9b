/**
 * The signal a program stops on: the one given (tests, embedding), else SIGINT or SIGTERM of the
 * process. `release` removes the process listeners.
 */
export function stopSignal(external: AbortSignal | undefined): { signal: AbortSignal; release: () => void } {
  if (external) return { signal: external, release: () => undefined };
  const controller = new AbortController();
  const stop = (): void => controller.abort(new Error('received a termination signal'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}
