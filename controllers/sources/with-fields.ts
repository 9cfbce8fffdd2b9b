/**
 * `{ ...base, ...extra }` for plain data (own enumerable string keys). V8 copies a spread fast but
 * then takes a slow path for every key the copy did not have; copying the keys avoids it (figures
 * in bench/README.md, config loading). A key `__proto__` (YAML
 * allows it) stays an own property, as with the spread, never a prototype.
 */
export function withFields<T extends object>(base: T, extra: Readonly<Record<string, unknown>>): T {
  const out: Record<string, unknown> = {};
  for (const source of [base as Record<string, unknown>, extra]) {
    for (const key of Object.keys(source)) {
      if (key === '__proto__') Object.defineProperty(out, key, { value: source[key], writable: true, enumerable: true, configurable: true });
      else out[key] = source[key];
    }
  }
  return out as T;
}
