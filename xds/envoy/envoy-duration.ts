import { parseDurationNanos } from '../../crds/index.js';

/** An Envoy `google.protobuf.Duration` from a duration string (`10s`, `1.5s`, `100ms`); undefined when malformed. */
export function envoyDuration(text: string): { seconds: number; nanos?: number } | undefined {
  const nanos = parseDurationNanos(text);
  if (nanos === undefined) return undefined;
  const seconds = Number(nanos / 1_000_000_000n);
  const rest = Number(nanos % 1_000_000_000n);
  return rest === 0 ? { seconds } : { seconds, nanos: rest };
}
