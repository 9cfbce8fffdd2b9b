import type { HeaderMutation } from './ext-authz-types.js';

export type HeaderValues = Record<string, string | string[]>;

/**
 * Applies header edits in order to lower-case headers: `append` adds a value (a further line, or
 * joined with `,` when `joined`, as the decisions hold request headers), `add-if-absent` only
 * adds, `overwrite` replaces or adds, `overwrite-if-exists` only replaces.
 */
export function applyHeaderMutations(headers: HeaderValues, mutations: readonly HeaderMutation[], options: { joined: boolean }): void {
  for (const { name, value, action } of mutations) {
    const existing = headers[name];
    switch (action) {
      case 'append':
        if (existing === undefined) headers[name] = value;
        else if (options.joined) headers[name] = `${String(existing)},${value}`;
        else headers[name] = [...(Array.isArray(existing) ? existing : [existing]), value];
        break;
      case 'add-if-absent':
        if (existing === undefined) headers[name] = value;
        break;
      case 'overwrite':
        headers[name] = value;
        break;
      case 'overwrite-if-exists':
        if (existing !== undefined) headers[name] = value;
        break;
    }
  }
}
