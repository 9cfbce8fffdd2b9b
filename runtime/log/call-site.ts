/**
 * Call-site capture for caller info and stack traces. `boundary` is the log method the user
 * called: V8 drops it and every frame above it, so the first frame left is the caller's.
 */
type Boundary = (...args: never[]) => unknown;

export function captureStackFrames(boundary: Boundary): string[] {
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, boundary);
  return (holder.stack ?? '')
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
    .filter((line) => line.startsWith('at '));
}

/** The caller as `dir/file.ts:42` (the reference's short form), or undefined when unknown. */
export function captureCaller(boundary: Boundary): string | undefined {
  const frame = captureStackFrames(boundary)[0];
  return frame === undefined ? undefined : shortLocation(frame);
}

export function captureStack(boundary: Boundary): string {
  return captureStackFrames(boundary).join('\n');
}

/** `at fn (file:///a/b/c.ts:42:7)` → `b/c.ts:42`. */
export function shortLocation(frame: string): string | undefined {
  const match = /\(?([^()\s]+?):(\d+):\d+\)?$/.exec(frame);
  if (!match?.[1] || !match[2]) return undefined;
  const path = match[1].replace(/^file:\/\//, '').replace(/[?#].*$/, '');
  const parts = path.split(/[\\/]/).filter((part) => part !== '');
  return `${parts.slice(-2).join('/')}:${match[2]}`;
}
