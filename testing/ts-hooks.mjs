// Test support: lets a child `node` process import the TypeScript sources (with @swc/core, as Jest
// does), for tests that must run our code in another process, such as in a private network namespace.
// Use: node --import ./ts-register.mjs …
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { transformFileSync } = require('@swc/core');

export async function resolve(specifier, context, next) {
  if (specifier.endsWith('.js') && context.parentURL && (specifier.startsWith('.') || specifier.startsWith('file:'))) {
    const ts = new URL(specifier, context.parentURL).href.replace(/\.js$/, '.ts');
    if (existsSync(fileURLToPath(ts))) return { url: ts, format: 'module', shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const { code } = transformFileSync(fileURLToPath(url), {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'es6' },
    // Stack traces name TypeScript lines under `node --enable-source-maps` (the flag check reads them).
    sourceMaps: 'inline',
  });
  return { format: 'module', source: code, shortCircuit: true };
}
