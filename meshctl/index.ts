// meshctl's commands, behind the command trees of cli/: what each one does, with its output.
export { validateFiles, type ValidateOutput } from './validate/validate-files.js';
export { listInjectors, renderInjectorList, type InjectorInventory } from './injector/injector-list.js';
export { loadOrchClient, type OrchClientFlags } from './orch/orch-client.js';
export { formatTable } from './orch/table.js';
export { orchInject, orchUninject, type ResourceIo } from './inject/orch-inject.js';
export { resolveInjectSources, type InjectSourceFlags, type InjectSources } from './inject/inject-sources.js';
export { renderProfileDiff, renderProfileDump, renderProfileList, type DumpFormat } from './install/profile-commands.js';
export { generateManifests, manifestText, writeManifestDir, type ManifestGenerateOptions } from './install/manifest-generate.js';
