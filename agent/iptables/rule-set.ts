import type { IpFamily } from './cidr.js';
import { BUILT_IN_CHAINS } from './constants.js';

export type IptablesTable = 'nat' | 'mangle' | 'raw';

/** Tables in the order the renderers emit them. */
export const TABLE_ORDER: readonly IptablesTable[] = ['nat', 'mangle', 'raw'];

export interface IptablesRule {
  readonly table: IptablesTable;
  readonly chain: string;
  /** 1-based position for `-I` in a built-in chain (ahead of rules others put there); absent appends. */
  readonly insertAt?: number;
  /** The rule specification after the chain: `-p tcp --dport 22 -j RETURN`. */
  readonly spec: readonly string[];
}

export interface ChainRef {
  readonly table: IptablesTable;
  readonly chain: string;
}

/** Everything one address family needs, in the order it must be applied. */
export interface RuleSet {
  readonly family: IpFamily;
  /** `ip` commands to run before the rules: TPROXY policy routing, the IPv6 passthrough address. */
  readonly ipCommands: readonly (readonly string[])[];
  /** Our own chains, in order of first use; created before any rule is added. */
  readonly chains: readonly ChainRef[];
  readonly rules: readonly IptablesRule[];
}

export function isEmptyRuleSet(ruleSet: RuleSet): boolean {
  return ruleSet.rules.length === 0 && ruleSet.ipCommands.length === 0;
}

/** Collects the rules of one family. Inserts into our own chains are resolved here, so they read in order. */
export class RuleSetBuilder {
  private readonly ipCommands: string[][] = [];
  private readonly chains: ChainRef[] = [];
  private readonly rules: IptablesRule[] = [];

  constructor(readonly family: IpFamily) {}

  ip(...args: string[]): this {
    this.ipCommands.push(['ip', ...args]);
    return this;
  }

  append(table: IptablesTable, chain: string, ...spec: string[]): this {
    this.declare(table, chain);
    this.rules.push({ table, chain, spec });
    return this;
  }

  insert(table: IptablesTable, chain: string, position: number, ...spec: string[]): this {
    this.declare(table, chain);
    if (BUILT_IN_CHAINS.has(chain)) {
      this.rules.push({ table, chain, insertAt: position, spec });
      return this;
    }
    const indexes = this.rules.flatMap((rule, index) => (rule.table === table && rule.chain === chain ? [index] : []));
    const before = indexes[position - 1];
    const at = before ?? (indexes.length > 0 ? (indexes[indexes.length - 1] as number) + 1 : this.rules.length);
    this.rules.splice(at, 0, { table, chain, spec });
    return this;
  }

  build(): RuleSet {
    return { family: this.family, ipCommands: [...this.ipCommands], chains: [...this.chains], rules: [...this.rules] };
  }

  private declare(table: IptablesTable, chain: string): void {
    if (BUILT_IN_CHAINS.has(chain)) return;
    if (!this.chains.some((c) => c.table === table && c.chain === chain)) this.chains.push({ table, chain });
  }
}
