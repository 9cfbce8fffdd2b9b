import Handlebars from 'handlebars';
import { templateHelpers } from './template-helpers.js';
import type { TemplateData } from './template-data.js';

/**
 * Compiles injection templates, keeping what it compiled by the text and the `env` their helpers
 * read: an injector built again (a reload of the injector config whose values changed, one per
 * revision) parses and compiles only templates it has not seen, where a large template takes a few
 * hundred milliseconds. A compiled template is a pure function of its text, options and helpers.
 */
export interface TemplateCompiler {
  compile(env: Readonly<Record<string, string>>, text: string): HandlebarsTemplateDelegate<TemplateData>;
}

/** A compiler keeping the last `kept` templates, least recently used out first. */
export function newTemplateCompiler(kept = 64): TemplateCompiler {
  const compiled = new Map<string, HandlebarsTemplateDelegate<TemplateData>>();
  return {
    compile(env, text) {
      const key = JSON.stringify([Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), text]);
      const known = compiled.get(key);
      if (known) {
        compiled.delete(key);
        compiled.set(key, known);
        return known;
      }
      // Its own Handlebars environment and helpers: what it compiles is shared only with the same `env`.
      const handlebars = Handlebars.create();
      for (const [name, helper] of Object.entries(templateHelpers(env))) handlebars.registerHelper(name, helper);
      // Parsing now finds syntax errors at load; not strict, because templates test optional
      // fields (a pod without annotations) that strict mode would refuse to look up.
      const template = handlebars.compile<TemplateData>(handlebars.parse(text), { noEscape: true, strict: false });
      compiled.set(key, template);
      if (compiled.size > kept) compiled.delete(compiled.keys().next().value as string);
      return template;
    },
  };
}
