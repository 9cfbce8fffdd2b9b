import { applyMeshConfig, DEFAULT_MESH_CONFIG, parseMeshConfigYaml, type MeshConfig } from '../../../crds/index.js';
import { BUILTIN_INJECTOR_CONFIG } from '../builtin-injector-config.js';
import { compileInjector, type Injector } from '../injector.js';
import { newTemplateCompiler } from '../template-compiler.js';
import { parseInjectorConfig, type InjectorConfig } from '../injector-config.js';

/** One compiler for the test file: every injector it builds compiles the built-in templates once. */
export const templates = newTemplateCompiler();

/** The built-in injector config, with values laid over the defaults (a deep merge of plain objects). */
export function builtinConfig(valuesOverlay: Record<string, unknown> = {}): InjectorConfig {
  const config = parseInjectorConfig(BUILTIN_INJECTOR_CONFIG);
  return { ...config, values: deepMerge(config.values, valuesOverlay) };
}

export function builtinInjector(valuesOverlay: Record<string, unknown> = {}): Injector {
  return compileInjector(builtinConfig(valuesOverlay), { templates });
}

/** The default mesh config with `overlay` (mesh config YAML) applied. */
export function meshConfigWith(overlay = ''): MeshConfig {
  return applyMeshConfig(DEFAULT_MESH_CONFIG, parseMeshConfigYaml(overlay, 'test'));
}

function deepMerge(base: Readonly<Record<string, unknown>>, overlay: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const current = result[key];
    const bothObjects = isObject(current) && isObject(value);
    result[key] = bothObjects ? deepMerge(current, value) : value;
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
