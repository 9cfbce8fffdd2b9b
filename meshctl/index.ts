// meshctl's commands, behind the command trees of cli/: what each one does, with its output.
export { ANALYZERS_FOUND_ISSUES, analyze, renderAnalyzerList, type AnalyzeOptions } from './analyze/analyze.js';
export { validateFiles, type ValidateOutput } from './validate/index.js';
export { listInjectors, renderInjectorList, type InjectorInventory } from './injector/injector-list.js';
export { loadKubeClient, type KubeClientFlags } from './kube/kube-client.js';
export { formatTable } from './kube/table.js';
export { forwardToPod, portForwardFailure, type PodForward, type PodForwardTarget } from './kube/port-forward.js';
export { podHttp, type PodHttpRequest, type PodHttpResponse } from './kube/pod-http.js';
export { kubeInject, kubeUninject, type ResourceIo } from './inject/kube-inject.js';
export { resolveInjectSources, type InjectSourceFlags, type InjectSources } from './inject/inject-sources.js';
export { renderProfileDiff, renderProfileDump, renderProfileList, type DumpFormat } from './install/profile-commands.js';
export { generateManifests, manifestText, writeManifestDir, type ManifestGenerateOptions } from './install/manifest-generate.js';
export { verifyInstallation } from './install/verify-installation.js';
export { orphanedProxiesWarning, prunedResourcesNotice, requireUninstallTarget, uninstall, type UninstallOptions } from './install/uninstall.js';
export { buildTagWebhook, generateTag, listTags, removeTag, setTag, type TagOptions } from './revision/revision-tags.js';
export { listRevisions, renderRevisionTable, type RevisionSummary } from './revision/revision-list.js';
export { checkUpgradeEligible, upgradeDiff } from './install/upgrade.js';
export { initOperator, operatorValuesOf, removeOperator, renderOperator, type OperatorChartOptions } from './operator/operator-commands.js';
export { runOperatorServer, type OperatorServerOptions } from './operator/operator-server.js';
export {
  describeRevision,
  describeRevisions,
  humanAge,
  type DescribeOptions,
  type PodSummary,
  type RevisionDescription,
} from './revision/revision-describe.js';
export { renderRevisionDescription, renderRevisionSummaries } from './revision/revision-describe-table.js';
export { INSTALL_RESOURCES, MIN_KUBERNETES_MINOR, precheck, renderPrecheck, type PrecheckOptions, type PrecheckReport } from './precheck/precheck.js';
export { MESSAGE_TYPES, formatMessage, sortedDeduped, type AnalysisMessage, type MessageLevel } from '../analysis/index.js';
export { diffManifests, readManifests, type ManifestDiffOptions } from './install/manifest-diff.js';
export {
  fileAdmin,
  proxyConfig,
  proxyLog,
  PROXY_LOG_LEVELS,
  type ProxyAdmin,
  type ProxyConfigOutput,
  type ProxyConfigRequest,
} from './proxyconfig/proxy-config.js';
export { parseConfigDump, type EnvoyConfigDump } from './proxyconfig/config-dump.js';
export { namespaceOf, podsBySelector, resolvePodTarget } from './kube/pod-target.js';
export { podAdmin, PROXY_ADMIN_PORT } from './proxyconfig/pod-admin.js';
export { resolveProxyTarget, type ProxyTarget } from './vmproxy/proxy-target.js';
export { targetAdmin, targetName } from './vmproxy/target-admin.js';
export { daemonConfigDump } from './vmproxy/daemon-admin.js';
export { DAEMON_MONITORING_PORT, queryDaemons, type DaemonAnswers, type DaemonQuery } from './proxystatus/daemon-query.js';
export { ProxyStatusError, compareConfigDumps, parseSyncz, statusTable, type SynczEntry } from './proxystatus/proxy-status.js';
export { authzCheck, policyNamesOf } from './describe/authz-check.js';
export { explainRequest, type ExplainRequest, type ExplainSource, type Explanation } from './authz/explain.js';
export { renderExplanation } from './authz/render-explanation.js';
export { requestHeaders, resolveSource, targetPort } from './authz/explain-target.js';
export { explainPod, type ExplainPodInput } from './authz/explain-pod.js';
export { describePod, type PodFacts } from './describe/describe-pod.js';
export { gatherPodFacts, gatherPodTarget, gatherServiceTarget } from './describe/describe-gather.js';
export { kindOf, waitForDistribution, type WaitOptions } from './wait/wait-distribution.js';
export { DAEMON_XDS_PORT, queryXds, type XdsAnswers, type XdsDeps, type XdsQuery, type XdsRequest, type XdsResponse } from './xds/xds-query.js';
export {
  XDS_TOKEN_AUDIENCE,
  XDS_TOKEN_EXPIRATION_SECONDS,
  defaultAuthority,
  requestXdsToken,
  type TokenSubject,
  type XdsSecurity,
} from './xds/xds-credentials.js';
export { controlPlaneOf, proxiesByControlPlane, proxiesOfSyncz, type ControlPlaneIdentity, type XdsProxy } from './xds/xds-syncz.js';
export { buildXdsVersionReport, renderXdsVersion, type XdsVersionReport } from './xds/xds-version.js';
export { debugBody, internalDebugHint, renderInternalDebug } from './xds/internal-debug.js';
export { fetchMeshVersions, fetchProxyVersions, type MeshVersionQuery, type MeshVersions, type ProxyInfo, type ServerInfo } from './version/mesh-versions.js';
export { renderProxyVersions, renderVersionReport, type VersionFormat, type VersionReport } from './version/render-version.js';
export {
  ADMIN_LOG_LEVELS,
  CONTROLZ_PORT,
  adminLog,
  controlzScopes,
  parseScopeLevels,
  type AdminLogRequest,
  type ScopeClient,
  type ScopeJson,
} from './admin/admin-log.js';
export { addonPod, openDashboard, systemBrowserOpener, type Addon, type BrowserOpener, type DashboardRequest } from './dashboard/dashboard.js';
export { renderConfigList, renderGlobalOptions, type ConfigListRow, type FlagUsage } from './config/config-list.js';
export {
  parseBugReportFile,
  resolveBugReportOptions,
  type BugReportOptions,
  type BugReportSettingName,
  type BugReportSettings,
} from './bugreport/bug-report-options.js';
export { runBugReport, type BugReportDeps, type BugReportResult } from './bugreport/bug-report.js';
export { checkInjection, renderCheckInject, type CheckInjectRow } from './checkinject/check-inject.js';
export {
  formatLatency,
  metricsQueries,
  parseWorkloadTarget,
  renderWorkloadMetrics,
  type WorkloadMetrics,
  type WorkloadTarget,
} from './metrics/workload-metrics.js';
export { gatherWorkloadMetrics, METRICS_ADDON, queryScalar, workloadMetrics, type MetricsRequest } from './metrics/metrics-query.js';
export { workloadGroupYaml, type WorkloadGroupInput } from './workload/workload-group.js';
export {
  configureWorkloadEntry,
  ENTRY_ROOT_CERT_FILE,
  ENTRY_TOKEN_FILE,
  ROOT_CERT_CONFIG_MAP,
  type EntryConfigureOptions,
} from './workload/entry-configure.js';
export {
  addExternalService,
  externalServiceEntryName,
  externalServiceObjects,
  parseExternalServiceArgs,
  removeExternalService,
  type ExternalServiceInput,
  type ExternalServicePort,
} from './addtomesh/external-service.js';
export { addDeploymentToMesh, addServiceToMesh, type AddToMeshRequest } from './addtomesh/add-deployments.js';
export { removeDeploymentFromMesh, removeServiceFromMesh, type RemoveFromMeshRequest } from './addtomesh/remove-deployments.js';
export { keyValueMap } from './key-value-items.js';
export { previewAuthzChange, type AuthzPreviewInput } from './preview/authz-preview.js';
export { renderPreview, VERDICTS_WOULD_CHANGE } from './preview/render-preview.js';
export { compareVerdicts, describeSourceBy, type VerdictChange, type VerdictReport, type WorkloadReplay } from './preview/verdict-changes.js';
export { newOfflineMesh, type OfflineMesh, type ProxyNodeFacts } from './preview/offline-decisions.js';
export { mtlsReadiness, renderReadiness, type ReadinessReport } from './preview/mtls-readiness.js';
