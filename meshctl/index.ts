// meshctl's commands, behind the command trees of cli/: what each one does, with its output.
export { validateFiles, type ValidateOutput } from './validate/validate-files.js';
export { listInjectors, renderInjectorList, type InjectorInventory } from './injector/injector-list.js';
export { loadOrchClient, type OrchClientFlags } from './orch/orch-client.js';
export { formatTable } from './orch/table.js';
export { orchInject, orchUninject, type ResourceIo } from './inject/orch-inject.js';
export { resolveInjectSources, type InjectSourceFlags, type InjectSources } from './inject/inject-sources.js';
export { renderProfileDiff, renderProfileDump, renderProfileList, type DumpFormat } from './install/profile-commands.js';
export { generateManifests, manifestText, writeManifestDir, type ManifestGenerateOptions } from './install/manifest-generate.js';
export { verifyInstallation } from './install/verify-installation.js';
export { requireUninstallTarget, uninstall, type UninstallOptions } from './install/uninstall.js';
export { buildTagWebhook, generateTag, listTags, removeTag, setTag, type TagOptions } from './revision/revision-tags.js';
export { listRevisions, renderRevisionTable, type RevisionSummary } from './revision/revision-list.js';
export { checkUpgradeEligible, upgradeDiff } from './install/upgrade.js';
export { initOperator, operatorValuesOf, removeOperator, renderOperator, type OperatorChartOptions } from './operator/operator-commands.js';
export { runOperatorServer, type OperatorServerOptions } from './operator/operator-server.js';
