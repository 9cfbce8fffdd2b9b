import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { UsageError, errorMessage } from '../../runtime/index.js';
import { MESH_CONFIG_MAP_KEY, buildMeshConfig, type MeshConfig } from '../../crds/index.js';
import {
  BUILTIN_INJECTOR_CONFIG,
  isWholeInjectorConfig,
  parseInjectorConfig,
  parseSingleTemplateConfig,
  type InjectorConfig,
} from '../../webhook/inject/index.js';

/** The inject flag group of seed 3. */
export interface InjectSourceFlags {
  readonly injectConfigFile: string;
  readonly injectConfigMapName: string;
  readonly meshConfigFile: string;
  readonly meshConfigMapName: string;
  readonly valuesFile: string;
  /** `-r/--revision`; '' and `default` are the default revision. */
  readonly revision: string;
}

export interface InjectSources {
  readonly config: InjectorConfig;
  readonly meshConfig: MeshConfig;
  /** Where each part came from, for `--vklog` style diagnostics and tests. */
  readonly origins: { readonly config: string; readonly mesh: string; readonly values: string };
}

export interface InjectSourceContext {
  /** The cluster, or undefined when there is none configured (then the built-in defaults serve). */
  readonly kubeConfig: KubeConfig | undefined;
  readonly meshNamespace: string;
  readonly warn: (text: string) => void;
}

/**
 * What `meshctl orch-inject` renders with, as the reference resolves it: each of the injector
 * config, the mesh config and the values from its file when given, else from the cluster's
 * ConfigMaps (named with the revision suffix), else the built-in defaults the Helm chart ships.
 */
export async function resolveInjectSources(flags: InjectSourceFlags, context: InjectSourceContext): Promise<InjectSources> {
  const revision = flags.revision === 'default' ? '' : flags.revision;
  const suffixed = (name: string): string => (revision === '' ? name : `${name}-${revision}`);
  const readConfigMap = async (name: string, key: string): Promise<{ text: string; origin: string } | undefined> => {
    if (!context.kubeConfig) return undefined;
    const { ApiException, CoreV1Api } = await import('@kubernetes/client-node');
    try {
      const configMap = await context.kubeConfig.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name, namespace: context.meshNamespace });
      const text = configMap.data?.[key];
      if (text === undefined) throw new UsageError(`ConfigMap ${context.meshNamespace}/${name} has no key "${key}"`);
      return { text, origin: `ConfigMap ${context.meshNamespace}/${name}` };
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) {
        context.warn(`ConfigMap ${context.meshNamespace}/${name} not found; using the built-in defaults\n`);
        return undefined;
      }
      if (error instanceof UsageError) throw error;
      throw new UsageError(`could not read ConfigMap ${context.meshNamespace}/${name}: ${errorMessage(error)}`, { cause: error });
    }
  };

  const valuesPart =
    flags.valuesFile !== ''
      ? { text: readFlagFile('--valuesFile', flags.valuesFile), origin: flags.valuesFile }
      : ((await readConfigMap(suffixed(flags.injectConfigMapName), 'values')) ?? { text: BUILTIN_INJECTOR_CONFIG.values, origin: 'built-in defaults' });
  const configPart =
    flags.injectConfigFile !== ''
      ? { text: readFlagFile('--injectConfigFile', flags.injectConfigFile), origin: flags.injectConfigFile }
      : ((await readConfigMap(suffixed(flags.injectConfigMapName), 'config')) ?? { text: BUILTIN_INJECTOR_CONFIG.config, origin: 'built-in defaults' });
  const meshPart =
    flags.meshConfigFile !== ''
      ? { text: readFlagFile('--meshConfigFile', flags.meshConfigFile), origin: flags.meshConfigFile }
      : await readConfigMap(suffixed(flags.meshConfigMapName), MESH_CONFIG_MAP_KEY);

  const config = isWholeInjectorConfig(configPart.text)
    ? parseInjectorConfig({ config: configPart.text, values: valuesPart.text })
    : parseSingleTemplateConfig(configPart.text, valuesPart.text);
  let meshConfig: MeshConfig;
  try {
    meshConfig = buildMeshConfig(meshPart?.text, meshPart?.origin ?? 'built-in defaults');
  } catch (error) {
    throw new UsageError(errorMessage(error), { cause: error });
  }
  return { config, meshConfig, origins: { config: configPart.origin, mesh: meshPart?.origin ?? 'built-in defaults', values: valuesPart.origin } };
}

function readFlagFile(flag: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`${flag}: cannot read ${file}: ${errorMessage(error)}`, { cause: error });
  }
}
