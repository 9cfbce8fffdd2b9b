/**
 * Plain data across a thread as JSON text where that is exact. A posted object graph is copied by
 * structured clone, whose reading side costs the receiving thread several times what `JSON.parse`
 * of the same data does (figures in bench/README.md, config loading); a string crosses as one copy. JSON is used only when it gives back an equal value: plain objects and
 * arrays of strings, booleans, null and finite numbers other than -0 (YAML's `.nan`, `.inf` and
 * `-0`, a `!!binary` buffer or an `undefined` take the structured clone).
 */
export type Transferred<T> = { readonly json: string } | { readonly value: T };

export function toTransfer<T>(value: T): Transferred<T> {
  return isJsonExact(value) ? { json: JSON.stringify(value) } : { value };
}

export function fromTransfer<T>(sent: Transferred<T>): T {
  return 'json' in sent ? (JSON.parse(sent.json) as T) : sent.value;
}

/** Whether `JSON.parse(JSON.stringify(value))` equals `value`, own keys, order and prototypes included. */
export function isJsonExact(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) {
        // `for…of` reads a hole as undefined, which fails: JSON would write null.
        for (const item of value as unknown[]) if (!isJsonExact(item)) return false;
        return true;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return false;
      for (const key of Object.keys(value)) if (!isJsonExact((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
}
