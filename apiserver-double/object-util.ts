import { randomInt } from 'node:crypto';

export { clone, deepEqual, isPlainObject, type JsonObject } from '../kube-patch/index.js';

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
