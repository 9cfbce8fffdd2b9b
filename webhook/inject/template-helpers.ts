import { parse, stringify } from 'yaml';
import { ANNOTATIONS, PROXY_CONTAINER } from '../../names/index.js';

type Helper = (...args: unknown[]) => unknown;

/** The functions the injection templates call (the reference's custom template functions, Handlebars-style). */
export function templateHelpers(env: Readonly<Record<string, string>>): Record<string, Helper> {
  return {
    annotation: (...args) => {
      const [meta, name, fallback] = withoutOptions(args);
      const value = annotationsOf(meta)[String(name)];
      return value ?? fallback;
    },
    isset: (...args) => {
      const [map, key] = withoutOptions(args);
      return isObject(map) && Object.hasOwn(map, String(key));
    },
    valueOrDefault: (...args) => {
      const [value, fallback] = withoutOptions(args);
      return isEmpty(value) ? fallback : value;
    },
    default: (...args) => {
      const [fallback, value] = withoutOptions(args);
      return isEmpty(value) ? fallback : value;
    },
    coalesce: (...args) => withoutOptions(args).find((value) => !isEmpty(value)),
    toJson: (...args) => JSON.stringify(withoutOptions(args)[0] ?? null),
    fromJson: (...args) => JSON.parse(String(withoutOptions(args)[0])) as unknown,
    toYaml: (...args) => stringify(withoutOptions(args)[0], { lineWidth: 0 }).trimEnd(),
    fromYaml: (...args) => parse(String(withoutOptions(args)[0])) as unknown,
    indent: (...args) => {
      const [spaces, text] = withoutOptions(args);
      const pad = ' '.repeat(Number(spaces));
      return String(text)
        .split('\n')
        .map((line) => pad + line)
        .join('\n');
    },
    excludeInboundPort: (...args) => {
      const [port, excluded] = withoutOptions(args);
      return excludeInboundPort(port, String(excluded ?? ''));
    },
    joinPorts: (...args) => [...new Set(withoutOptions(args).flatMap((list) => splitList(String(list ?? ''))))].join(','),
    concat: (...args) =>
      withoutOptions(args)
        .map((part) => (part === undefined || part === null ? '' : String(part)))
        .join(''),
    join: (...args) => {
      const [list, separator] = withoutOptions(args);
      return Array.isArray(list) ? list.join(String(separator ?? ',')) : String(list ?? '');
    },
    includeInboundPorts: (...args) => containerPorts(withoutOptions(args)[0], true).join(','),
    applicationPorts: (...args) => containerPorts(withoutOptions(args)[0], false).join(','),
    appContainers: (...args) => containersOf(withoutOptions(args)[0]).filter((name) => name !== PROXY_CONTAINER),
    podPortsJson: (...args) => JSON.stringify(portsOf(withoutOptions(args)[0])),
    withName: (...args) => {
      const [name, spec] = withoutOptions(args);
      return { name, ...(isObject(spec) ? spec : {}) };
    },
    proxyResources: (...args) => {
      const [meta, defaults] = withoutOptions(args);
      return proxyResources(annotationsOf(meta), defaults);
    },
    first: (...args) => {
      const [list] = withoutOptions(args);
      return Array.isArray(list) ? list[0] : undefined;
    },
    len: (...args) => {
      const [value] = withoutOptions(args);
      if (Array.isArray(value) || typeof value === 'string') return value.length;
      return isObject(value) ? Object.keys(value).length : 0;
    },
    eq: (...args) => {
      const [a, b] = withoutOptions(args);
      return a === b || (a !== undefined && a !== null && b !== undefined && b !== null && String(a) === String(b));
    },
    ne: (...args) => {
      const [a, b] = withoutOptions(args);
      return !(a === b || (a !== undefined && a !== null && b !== undefined && b !== null && String(a) === String(b)));
    },
    or: (...args) => withoutOptions(args).find((value) => truthy(value)) ?? false,
    and: (...args) => withoutOptions(args).every((value) => truthy(value)),
    not: (...args) => !truthy(withoutOptions(args)[0]),
    contains: (...args) => {
      const [needle, haystack] = withoutOptions(args);
      return String(haystack ?? '').includes(String(needle));
    },
    toLower: (...args) => String(withoutOptions(args)[0] ?? '').toLowerCase(),
    env: (...args) => {
      const [name, fallback] = withoutOptions(args);
      return env[String(name)] ?? fallback ?? '';
    },
  };
}

/** Adds the port to the comma list of excluded inbound ports unless it is there, or is empty or 0. */
export function excludeInboundPort(port: unknown, excluded: string): string {
  const portText = String(port ?? '').trim();
  if (portText === '' || portText === '0') return excluded;
  const ports = splitList(excluded);
  if (ports.includes(portText)) return excluded;
  return [...ports, portText].join(',');
}

/** The proxy's resources: the CPU/memory annotations when any is set, else the values' defaults. */
export function proxyResources(annotations: Readonly<Record<string, string>>, defaults: unknown): Record<string, unknown> {
  const cpu = annotations[ANNOTATIONS.proxyCPU];
  const memory = annotations[ANNOTATIONS.proxyMemory];
  const cpuLimit = annotations[ANNOTATIONS.proxyCPULimit];
  const memoryLimit = annotations[ANNOTATIONS.proxyMemoryLimit];
  if (cpu === undefined && memory === undefined && cpuLimit === undefined && memoryLimit === undefined) {
    return isObject(defaults) ? defaults : {};
  }
  const resources: Record<string, unknown> = {};
  if (cpu !== undefined || memory !== undefined) resources['requests'] = definedOnly({ cpu, memory });
  if (cpuLimit !== undefined || memoryLimit !== undefined) resources['limits'] = definedOnly({ cpu: cpuLimit, memory: memoryLimit });
  return resources;
}

export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

function definedOnly(map: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(map).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function withoutOptions(args: unknown[]): unknown[] {
  return args.slice(0, -1);
}

function annotationsOf(meta: unknown): Record<string, string> {
  const annotations = isObject(meta) ? meta['annotations'] : undefined;
  return isObject(annotations) ? (annotations as Record<string, string>) : {};
}

function containersOf(containers: unknown): string[] {
  return Array.isArray(containers) ? containers.filter(isObject).map((container) => String(container['name'])) : [];
}

function portsOf(containers: unknown): Record<string, unknown>[] {
  if (!Array.isArray(containers)) return [];
  return containers.filter(isObject).flatMap((container) => (Array.isArray(container['ports']) ? container['ports'].filter(isObject) : []));
}

function containerPorts(containers: unknown, includeProxy: boolean): string[] {
  const list = Array.isArray(containers) ? containers.filter(isObject) : [];
  return list
    .filter((container) => includeProxy || container['name'] !== PROXY_CONTAINER)
    .flatMap((container) => (Array.isArray(container['ports']) ? container['ports'].filter(isObject) : []))
    .map((port) => String(port['containerPort']));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
}

function truthy(value: unknown): boolean {
  return !(isEmpty(value) || value === false || value === 0);
}
