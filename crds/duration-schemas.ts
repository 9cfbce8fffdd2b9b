import * as z from 'zod/mini';
import { DURATION_PATTERN, NANOS_PER_MILLISECOND, parseDurationNanos } from './duration.js';
import { describeInput } from './zod-issues.js';

// Built with zod's tree-shakable API: the agent validates its mesh config with these and nothing of
// the policy API, and its bundle then carries a few dozen kilobytes of zod instead of all of it
// (the policy schemas embed them as they embed any schema).

const DURATION_EXAMPLES = 'such as 1s, 0.5s, 100ms or 1h30m';

/** Any well-formed duration, zero included (TTLs, idle timeouts where 0s disables). */
export const durationOrZeroSchema = z
  .string({
    error: (issue) => {
      if (issue.code !== 'invalid_type') return undefined;
      if (issue.input === undefined) return `required: expected a duration ${DURATION_EXAMPLES}`;
      return `expected a duration string ${DURATION_EXAMPLES}, got ${describeInput(issue.input)}`;
    },
  })
  .check(z.regex(DURATION_PATTERN, { error: (issue) => `expected a duration ${DURATION_EXAMPLES}, got ${JSON.stringify(issue.input)}` }));

/** A duration of at least 1ms with millisecond precision: what the proxy accepts for timeouts and intervals. */
export const durationSchema = durationOrZeroSchema.check(
  z.refine(
    (text) => {
      const nanos = parseDurationNanos(text);
      // A malformed duration was already reported by the pattern check.
      return nanos === undefined || (nanos >= NANOS_PER_MILLISECOND && nanos % NANOS_PER_MILLISECOND === 0n);
    },
    { error: (issue) => `expected a duration of at least 1ms in whole milliseconds, got ${JSON.stringify(issue.input)}` },
  ),
);
