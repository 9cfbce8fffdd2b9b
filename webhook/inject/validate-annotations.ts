import { isIP } from 'node:net';
import { parse } from 'yaml';
import { ANNOTATIONS } from '../../names/index.js';
import { errorMessage } from '../../runtime/index.js';
import { parseProxyConfigInput } from '../../crds/index.js';
import { InjectionError } from './injection-error.js';
import { splitList } from './template-helpers.js';

type Validator = (value: string) => string | undefined;

const INTERCEPTION_MODES = ['REDIRECT', 'TPROXY', 'NONE'];

/** The annotations injection checks before rendering, each with why a value is refused. */
const VALIDATORS: Readonly<Record<string, Validator>> = {
  [ANNOTATIONS.interceptionMode]: (v) => (INTERCEPTION_MODES.includes(v) ? undefined : `interceptionMode invalid, use ${INTERCEPTION_MODES.join(',')}`),
  [ANNOTATIONS.enableCoreDump]: validateBool,
  [ANNOTATIONS.statusPort]: (v) => validatePort(v, true),
  [ANNOTATIONS.readinessInitialDelaySeconds]: validateUint32,
  [ANNOTATIONS.readinessPeriodSeconds]: validateUint32,
  [ANNOTATIONS.readinessFailureThreshold]: validateUint32,
  [ANNOTATIONS.includeOutboundIPRanges]: (v) => (v === '*' ? undefined : validateCidrList(v)),
  [ANNOTATIONS.excludeOutboundIPRanges]: validateCidrList,
  [ANNOTATIONS.includeInboundPorts]: (v) => (v === '*' ? undefined : validatePortList(v)),
  [ANNOTATIONS.excludeInboundPorts]: validatePortList,
  [ANNOTATIONS.excludeOutboundPorts]: validatePortList,
  [ANNOTATIONS.mergeMetrics]: validateBool,
  [ANNOTATIONS.proxyConfig]: validateProxyConfig,
};

/**
 * Checks the pod's injection annotations; throws one error listing every refused value, each as
 * `invalid value '<v>' for annotation '<name>': <why>`, in annotation-name order.
 */
export function validateAnnotations(annotations: Readonly<Record<string, string>>): void {
  const failures: string[] = [];
  for (const name of Object.keys(annotations).sort()) {
    const validator = VALIDATORS[name];
    const value = annotations[name] as string;
    const why = validator?.(value);
    if (why !== undefined) failures.push(`invalid value '${value}' for annotation '${name}': ${why}`);
  }
  if (failures.length > 0) throw new InjectionError('invalid-injection-annotation', failures.join('; '));
}

/** Why injection would refuse this value of the annotation, or undefined (also for annotations it does not check). */
export function annotationValueProblem(name: string, value: string): string | undefined {
  return VALIDATORS[name]?.(value);
}

const BOOLEANS = ['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False'];

/** Go's strconv.ParseBool: the spellings of true and false the reference accepts. */
export function parseBool(value: string): boolean | undefined {
  if (!BOOLEANS.includes(value)) return undefined;
  return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
}

function validateBool(value: string): string | undefined {
  return parseBool(value) === undefined ? `strconv.ParseBool: parsing "${value}": invalid syntax` : undefined;
}

function validateUint32(value: string): string | undefined {
  if (!/^\d+$/.test(value) || Number(value) > 0xffffffff) return `strconv.ParseUint: parsing "${value}": invalid syntax`;
  return undefined;
}

function validatePort(value: string, allowZero = false): string | undefined {
  if (!/^\d+$/.test(value.trim())) return `failed parsing port "${value}": invalid syntax`;
  const port = Number(value.trim());
  if ((port === 0 && !allowZero) || port > 65535) return `port number ${port} must be in the range 1..65535`;
  return undefined;
}

function validatePortList(value: string): string | undefined {
  for (const port of splitList(value)) {
    const why = validatePort(port);
    if (why !== undefined) return why;
  }
  return undefined;
}

function validateCidrList(value: string): string | undefined {
  for (const cidr of splitList(value)) {
    const [address = '', prefix, extra] = cidr.split('/');
    const family = isIP(address);
    const maxPrefix = family === 6 ? 128 : 32;
    if (family === 0 || prefix === undefined || extra !== undefined || !/^\d+$/.test(prefix) || Number(prefix) > maxPrefix) {
      return `failed parsing cidr '${cidr}': invalid CIDR address: ${cidr}`;
    }
  }
  return undefined;
}

function validateProxyConfig(value: string): string | undefined {
  let document: unknown;
  try {
    document = parse(value);
  } catch (error) {
    return `failed to parse proxy config: ${errorMessage(error)}`;
  }
  const result = parseProxyConfigInput(document ?? {});
  if (result.success) return undefined;
  return result.error.issues.map((issue) => `${issue.path.join('.') || '(document)'}: ${issue.message}`).join(', ');
}
