/** One finding about a resource: where it is (`spec.rules[0].from[1].source.principals[2]`) and what is expected. */
export type ValidationIssue = { path: string; message: string };

export type PathSegment = string | number;
export type Path = readonly PathSegment[];

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Renders a path the way users read it: array indexes as `[0]`, field names after a dot, and map
 * keys that are not plain identifiers (label keys, header names, port numbers) as `["key"]`.
 */
export function renderPath(path: Path): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') {
      out += `[${segment}]`;
    } else if (IDENTIFIER.test(segment)) {
      out += out === '' ? segment : `.${segment}`;
    } else {
      out += `[${JSON.stringify(segment)}]`;
    }
  }
  return out;
}

/** Collects errors and warnings while a resource is checked; paths stay structured until the end. */
export class IssueSink {
  readonly errors: ValidationIssue[] = [];
  readonly warnings: ValidationIssue[] = [];

  error(path: Path, message: string): void {
    this.errors.push({ path: renderPath(path), message });
  }

  warn(path: Path, message: string): void {
    this.warnings.push({ path: renderPath(path), message });
  }
}
