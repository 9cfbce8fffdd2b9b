import type { MessageTypeName } from '../messages.js';

/** One finding about the rules of a VirtualService: its message type and text. */
export interface RuleFinding {
  readonly type: Extract<MessageTypeName, 'VirtualServiceUnreachableRule' | 'VirtualServiceIneffectiveMatch'>;
  readonly message: string;
}

type Loose = Record<string, unknown>;

const asObject = (value: unknown): Loose => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Loose) : {});
const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const asString = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * A match as the reference compares matches: its JSON with keys sorted and unset (zero) fields
 * left out, as Go's `omitempty` does, so that key order and explicit defaults do not matter.
 */
function canonical(value: unknown): string | undefined {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return undefined;
  if (Array.isArray(value)) {
    const items = value.map((item) => canonical(item) ?? 'null');
    return items.length === 0 ? undefined : `[${items.join(',')}]`;
  }
  if (typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .flatMap((key) => {
        const inner = canonical((value as Loose)[key]);
        return inner === undefined ? [] : [`${JSON.stringify(key)}:${inner}`];
      });
    return entries.length === 0 ? undefined : `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** HTTP routes and matches are named by their quoted name when they have one; all else by `#<index>`. */
const named = (item: unknown, index: number, http: boolean): string => {
  const name = http ? asString(asObject(item).name) : '';
  return name === '' ? `#${index}` : JSON.stringify(name);
};

const exactOrPrefix = (match: unknown): string => {
  const { exact, prefix } = asObject(match);
  if (asString(exact) !== '') return `exact:${asString(exact)}`;
  return asString(prefix) !== '' ? `prefix:${asString(prefix)}` : '';
};

/** What the reference reads of an HTTP match with a uri prefix to find a later match it covers. */
interface PrefixMatch {
  readonly route: string;
  readonly match: string;
  readonly prefix: string;
  readonly port: number;
  readonly method: string;
  readonly authority: string;
  readonly maps: readonly ReadonlyMap<string, string>[];
}

function prefixMatch(route: string, match: Loose, matchName: string): PrefixMatch | undefined {
  const prefix = asString(asObject(match.uri).prefix);
  if (prefix === '') return undefined;
  const map = (field: unknown): Map<string, string> => new Map(Object.entries(asObject(field)).map(([key, value]) => [key, exactOrPrefix(value)]));
  return {
    route,
    match: matchName,
    prefix,
    port: typeof match.port === 'number' ? match.port : 0,
    // A match without a method is taken as GET, as the reference takes it.
    method: exactOrPrefix(match.method) || 'exact:GET',
    authority: exactOrPrefix(match.authority),
    maps: [map(match.headers), map(match.queryParams), map(match.withoutHeaders)],
  };
}

/** The reference's `coveredValidation`, quirks included: whether the earlier match `a` covers the later `b`. */
function covers(a: PrefixMatch, b: PrefixMatch): boolean {
  if (!b.prefix.startsWith(a.prefix) || a.port !== b.port) return false;
  if (a.method !== b.method && !a.method.startsWith(b.method)) return false;
  if (a.authority !== b.authority && !a.authority.startsWith(b.authority)) return false;
  return a.maps.every((mapA, i) => {
    const mapB = b.maps[i] ?? new Map<string, string>();
    if (mapA.size !== mapB.size) return false;
    return [...mapA].every(([key, value]) => {
      const other = mapB.get(key);
      return other !== undefined && (value === other || value.startsWith(other));
    });
  });
}

function analyzeRoutes(routes: unknown[], http: boolean, out: RuleFinding[]): void {
  const unreachable = (rule: string, reason: string): void => {
    out.push({ type: 'VirtualServiceUnreachableRule', message: `VirtualService rule ${rule} not used (${reason}).` });
  };
  const ineffective = (rule: string, match: string, earlier: string): void => {
    out.push({
      type: 'VirtualServiceIneffectiveMatch',
      message: `VirtualService rule ${rule} match ${match} is not used (duplicate/overlapping match in rule ${earlier}).`,
    });
  };
  const seen = new Map<string, number>();
  const prefixes: PrefixMatch[] = [];
  let catchAll = -1;
  routes.forEach((route, ruleIndex) => {
    if (route === null || route === undefined) return;
    const rule = named(route, ruleIndex, http);
    const matches = asList(asObject(route).match);
    if (matches.length === 0) {
      if (catchAll >= 0) unreachable(rule, 'only the last rule can have no matches');
      catchAll = ruleIndex;
      return;
    }
    let duplicates = 0;
    matches.forEach((match, matchIndex) => {
      if (catchAll >= 0) {
        unreachable(rule, 'route without matches defined before');
        return;
      }
      const key = canonical(http ? { ...asObject(match), name: undefined } : match) ?? '{}';
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        ineffective(rule, named(match, matchIndex, http), named(routes[earlier], earlier, http));
        duplicates++;
        return;
      }
      seen.set(key, ruleIndex);
      const withPrefix = http ? prefixMatch(rule, asObject(match), named(match, matchIndex, true)) : undefined;
      if (withPrefix !== undefined) prefixes.push(withPrefix);
    });
    if (duplicates === matches.length) unreachable(rule, 'all matches used by prior rules');
  });
  prefixes.forEach((a, i) => {
    for (const b of prefixes.slice(i + 1)) {
      if (b.prefix === a.prefix || !covers(a, b)) continue;
      ineffective(b.route, `${b.match} of prefix ${b.prefix}`, `${a.match} of prefix ${a.prefix} on ${a.route}`);
    }
  });
}

/**
 * MSH0130 and MSH0131, as the reference's VirtualService validation warns: rules after a rule
 * without matches, or whose every match an earlier rule already has, are never used; a match an
 * earlier rule already has (or an earlier HTTP uri prefix match covers) is never used. Reads the
 * spec as written, so that it also runs over a VirtualService with errors elsewhere.
 */
export function unreachableRuleFindings(spec: unknown): RuleFinding[] {
  const out: RuleFinding[] = [];
  const { http, tcp, tls } = asObject(spec);
  analyzeRoutes(asList(http), true, out);
  analyzeRoutes(asList(tcp), false, out);
  analyzeRoutes(asList(tls), false, out);
  return out;
}
