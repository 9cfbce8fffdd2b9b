import { parse } from 'yaml';
import { z } from 'zod';
import { errorMessage } from '../../runtime/index.js';
import { InjectionError } from './injection-error.js';
import type { LabelSelector } from '../../names/index.js';

/** The `config` and `values` keys of the `mesh-sidecar-injector` ConfigMap, as text. */
export interface InjectorConfigText {
  /** YAML: policy, templates, selectors… */
  readonly config: string;
  /** JSON: the Helm values the templates read. */
  readonly values: string;
}

/** The injector's policy and templates, parsed. */
export interface InjectorConfig {
  /** The default when a pod says nothing: `enabled` or `disabled` (anything else never injects). */
  readonly policy: string;
  readonly defaultTemplates: readonly string[];
  /** Template name → template text (Handlebars producing a partial pod as YAML). */
  readonly templates: Readonly<Record<string, string>>;
  /** A name of `inject.mesh.io/templates` standing for several templates. */
  readonly aliases: Readonly<Record<string, readonly string[]>>;
  readonly neverInjectSelector: readonly LabelSelector[];
  readonly alwaysInjectSelector: readonly LabelSelector[];
  /** Added to every injected pod's annotations. */
  readonly injectedAnnotations: Readonly<Record<string, string>>;
  readonly values: Readonly<Record<string, unknown>>;
}

const selectorSchema = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z
    .array(z.strictObject({ key: z.string(), operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']), values: z.array(z.string()).optional() }))
    .optional(),
});

const configSchema = z.looseObject({
  policy: z.string().optional(),
  defaultTemplates: z.array(z.string()).nullish(),
  templates: z.record(z.string(), z.string()).nullish(),
  aliases: z.record(z.string(), z.array(z.string())).nullish(),
  neverInjectSelector: z.array(selectorSchema).nullish(),
  alwaysInjectSelector: z.array(selectorSchema).nullish(),
  injectedAnnotations: z.record(z.string(), z.string()).nullish(),
});

/** Parses the ConfigMap's `config` (YAML) and `values` (JSON); errors name the key and the field. */
export function parseInjectorConfig(text: InjectorConfigText): InjectorConfig {
  const config = parseConfigYaml(text.config);
  return { ...config, values: parseValues(text.values) };
}

/**
 * A bare template file (`meshctl kube-inject --injectConfigFile` given one template rather than a
 * whole config): it becomes the `sidecar` template of an enabled config.
 */
export function parseSingleTemplateConfig(templateText: string, valuesText: string): InjectorConfig {
  return { ...emptyConfig(), templates: { sidecar: templateText }, values: parseValues(valuesText) };
}

/** True when an `--injectConfigFile` text is a whole config (it has `templates:`) rather than one template. */
export function isWholeInjectorConfig(text: string): boolean {
  try {
    const parsed: unknown = parse(text);
    return typeof parsed === 'object' && parsed !== null && 'templates' in parsed;
  } catch {
    return false;
  }
}

function emptyConfig(): Omit<InjectorConfig, 'values'> {
  return {
    policy: 'enabled',
    defaultTemplates: ['sidecar'],
    templates: {},
    aliases: {},
    neverInjectSelector: [],
    alwaysInjectSelector: [],
    injectedAnnotations: {},
  };
}

function parseConfigYaml(text: string): Omit<InjectorConfig, 'values'> {
  let document: unknown;
  try {
    document = parse(text) ?? {};
  } catch (error) {
    throw new InjectionError('invalid-injector-config', `injector config key "config": not YAML: ${errorMessage(error)}`, { cause: error });
  }
  const result = configSchema.safeParse(document);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(document)'}: ${issue.message}`);
    throw new InjectionError('invalid-injector-config', `injector config key "config": ${issues.join('; ')}`);
  }
  const parsed = result.data;
  const defaults = emptyConfig();
  return {
    policy: parsed.policy ?? defaults.policy,
    defaultTemplates: parsed.defaultTemplates && parsed.defaultTemplates.length > 0 ? parsed.defaultTemplates : defaults.defaultTemplates,
    templates: parsed.templates ?? {},
    aliases: parsed.aliases ?? {},
    neverInjectSelector: parsed.neverInjectSelector ?? [],
    alwaysInjectSelector: parsed.alwaysInjectSelector ?? [],
    injectedAnnotations: parsed.injectedAnnotations ?? {},
  };
}

function parseValues(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch (error) {
    throw new InjectionError('invalid-injector-config', `injector config key "values": not JSON: ${errorMessage(error)}`, { cause: error });
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new InjectionError('invalid-injector-config', 'injector config key "values": must be a JSON object');
  }
  return values as Record<string, unknown>;
}
