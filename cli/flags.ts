import { InvalidArgumentError, Option } from 'commander';
import { formatDuration, parseDuration } from '../runtime/index.js';

/**
 * Commander argument parsers with Go flag semantics, so values read and print as the seeds write
 * them. Each throws InvalidArgumentError, which commander reports naming the flag (exit code 2).
 */
export function durationFlag(value: string): number {
  try {
    return parseDuration(value);
  } catch {
    throw new InvalidArgumentError(`expected a duration such as 100ms, 10s or 1m0s, got "${value}"`);
  }
}

export function intFlag(value: string): number {
  if (!/^[+-]?\d+$/.test(value.trim())) {
    throw new InvalidArgumentError(`expected an integer, got "${value}"`);
  }
  return Number.parseInt(value, 10);
}

export function nonNegativeIntFlag(value: string): number {
  const parsed = intFlag(value);
  if (parsed < 0) throw new InvalidArgumentError(`expected a non-negative integer, got "${value}"`);
  return parsed;
}

export function uint16Flag(value: string): number {
  const parsed = intFlag(value);
  if (parsed < 0 || parsed > 65535) {
    throw new InvalidArgumentError(`expected an integer from 0 to 65535, got "${value}"`);
  }
  return parsed;
}

export function floatFlag(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed)) {
    throw new InvalidArgumentError(`expected a number, got "${value}"`);
  }
  return parsed;
}

/** A Go `stringSlice`: comma-separated and repeatable; the first use replaces the default. */
export function stringSliceFlag(value: string, previous: string[] | undefined): string[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return isDefaultMarked(previous) ? items : [...(previous ?? []), ...items];
}

/** A Go `stringArray`: repeatable, no comma splitting; the first use replaces the default. */
export function stringArrayFlag(value: string, previous: string[] | undefined): string[] {
  return isDefaultMarked(previous) ? [value] : [...(previous ?? []), value];
}

const DEFAULT_MARK = Symbol('default');

/** Marks a list default so the first user value replaces it rather than appending to it. */
export function listDefault(items: string[]): string[] {
  const copy = [...items];
  Object.defineProperty(copy, DEFAULT_MARK, { value: true });
  return copy;
}

function isDefaultMarked(list: string[] | undefined): boolean {
  return list !== undefined && (list as unknown as Record<symbol, unknown>)[DEFAULT_MARK] === true;
}

/** How a Go slice default prints in help: `[ext_authz,authn,authz]`. */
export function describeList(items: readonly string[]): string {
  return `[${items.join(',')}]`;
}

export function describeDuration(ms: number): string {
  return formatDuration(ms);
}

/** Validates a Go listen address such as `:15010`, `127.0.0.1:0` or `[::1]:8080`. */
export function listenAddressFlag(value: string): string {
  const match = /^(\[[^\]]*\]|[^:]*):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) {
    throw new InvalidArgumentError(`expected a listen address such as :15010 or 127.0.0.1:15010, got "${value}"`);
  }
  return value;
}

/** Go bool flags accept `--flag`, `--flag=true` and `--flag=false`. */
export function boolOption(flags: string, description: string, defaultValue: boolean): Option {
  return new Option(`${flags} [bool]`, description).argParser(parseBoolFlag).preset('true').default(defaultValue);
}

function parseBoolFlag(value: string): boolean {
  // A short flag written `-x=false` reaches us with its `=`, which pflag accepts.
  const normalized = value.trim().replace(/^=/, '');
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(normalized)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(normalized)) return false;
  throw new InvalidArgumentError(`expected true or false, got "${value}"`);
}
