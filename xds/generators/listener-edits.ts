type Filter = { typed_config?: Record<string, unknown> } & Record<string, unknown>;
type Chain = { filters?: readonly Filter[] } & Record<string, unknown>;

/**
 * A listener with the typed config of each network filter of a type (in every filter chain and the
 * default one) edited: settings that apply to all HTTP connection managers or TCP proxies alike
 * (access logs, HTTP/1.0), added after the listener is built. New objects; the input is untouched.
 */
export function editNetworkFilters<L extends object>(
  listener: L,
  types: ReadonlySet<string>,
  edit: (config: Record<string, unknown>) => Record<string, unknown>,
): L {
  const editChain = (chain: Chain): Chain =>
    chain.filters
      ? {
          ...chain,
          filters: chain.filters.map((filter) => {
            const type = filter.typed_config?.['@type'];
            return typeof type === 'string' && types.has(type) && filter.typed_config ? { ...filter, typed_config: edit(filter.typed_config) } : filter;
          }),
        }
      : chain;
  const shaped = listener as { filter_chains?: readonly Chain[]; default_filter_chain?: Chain };
  return {
    ...listener,
    ...(shaped.filter_chains ? { filter_chains: shaped.filter_chains.map(editChain) } : {}),
    ...(shaped.default_filter_chain ? { default_filter_chain: editChain(shaped.default_filter_chain) } : {}),
  };
}
