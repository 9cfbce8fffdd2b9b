/** The route configurations a set of listeners (as JSON) asks for over RDS, sorted. */
export function routeNamesOf(listeners: readonly Record<string, unknown>[]): string[] {
  const names = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') {
      const rds = (value as { rds?: { route_config_name?: unknown } }).rds;
      if (typeof rds?.route_config_name === 'string') names.add(rds.route_config_name);
      Object.values(value).forEach(visit);
    }
  };
  visit(listeners);
  return [...names].sort();
}
