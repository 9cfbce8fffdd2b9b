import { compareKubeVersions } from './resource-type.js';
import type { ResourceType } from './resource-type.js';

export interface GroupInfo {
  name: string;
  /** Served versions, preferred first. */
  versions: string[];
}

/** Which kinds are served, by group/version/plural and by group/kind; changes when CRDs do. */
export class ResourceRegistry {
  private readonly types = new Map<string, ResourceType>();
  private readonly order: string[] = [];

  constructor(initial: ResourceType[]) {
    for (const type of initial) this.register(type);
  }

  register(type: ResourceType): void {
    const key = storageKey(type);
    if (!this.types.has(key)) this.order.push(key);
    this.types.set(key, type);
  }

  unregister(group: string, plural: string): void {
    const key = `${group}/${plural}`;
    this.types.delete(key);
    const at = this.order.indexOf(key);
    if (at >= 0) this.order.splice(at, 1);
  }

  /** The type serving `plural` at `group/version`, if that version is served. */
  byResource(group: string, version: string, plural: string): ResourceType | undefined {
    const type = this.types.get(`${group}/${plural}`);
    return type && type.versions.includes(version) ? type : undefined;
  }

  byGroupResource(group: string, plural: string): ResourceType | undefined {
    return this.types.get(`${group}/${plural}`);
  }

  byKind(group: string, kind: string): ResourceType | undefined {
    for (const type of this.types.values()) if (type.group === group && type.kind === kind) return type;
    return undefined;
  }

  all(): ResourceType[] {
    return this.order.map((key) => this.types.get(key)).filter((t): t is ResourceType => t !== undefined);
  }

  resourcesIn(group: string, version: string): ResourceType[] {
    return this.all().filter((t) => t.group === group && t.versions.includes(version));
  }

  /** Named groups in registration order (the core group is served under /api, not listed here). */
  groups(): GroupInfo[] {
    const groups = new Map<string, Set<string>>();
    for (const type of this.all()) {
      if (type.group === '') continue;
      const versions = groups.get(type.group) ?? new Set<string>();
      for (const v of type.versions) versions.add(v);
      groups.set(type.group, versions);
    }
    return [...groups].map(([name, versions]) => ({ name, versions: [...versions].sort(compareKubeVersions) }));
  }
}

/** Objects of a kind live under one key whatever version they are read at. */
export function storageKey(type: Pick<ResourceType, 'group' | 'plural'>): string {
  return `${type.group}/${type.plural}`;
}
