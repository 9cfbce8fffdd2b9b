import { randomInt } from 'node:crypto';

export type JsonObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** RFC 3339 with second precision, as Kubernetes writes timestamps. */
export function kubeTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** RFC 3339 with microseconds, as Kubernetes writes MicroTime (Lease, Event). */
export function kubeMicroTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The five random characters appended to `metadata.generateName`. */
export function generateNameSuffix(): string {
  let out = '';
  for (let i = 0; i < 5; i++) out += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
  return out;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Returns why `name` is not valid under the rule, or undefined when it is. */
export function nameProblem(name: string, rule: 'subdomain' | 'label' | 'path'): string | undefined {
  if (rule === 'path') {
    if (name === '.' || name === '..' || name.includes('/') || name.includes('%')) return 'may not contain "/" or "%", nor be "." or ".."';
    return undefined;
  }
  if (rule === 'label') {
    if (name.length > 63 || !DNS_LABEL.test(name)) {
      return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
    }
    return undefined;
  }
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}
