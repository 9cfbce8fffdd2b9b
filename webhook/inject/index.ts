// The sidecar injection core, a sub-package of webhook/ (import it as webhook/inject/index.js):
// pure functions from a pod, the injector config and the mesh config to the injected pod. The
// decision (§1.3 order), the Handlebars templates and their helpers, annotation validation,
// probe rewriting, the status annotation, re-injection and uninjection, the RFC 6902 patch, and
// kube-inject's multi-document processing. No I/O: the webhook server and meshctl wrap it.
export { BUILTIN_INJECTOR_CONFIG } from './builtin-injector-config.js';
export { compileInjector, type CompileOptions, type InjectParams, type Injector } from './injector.js';
export { newTemplateCompiler, type TemplateCompiler } from './template-compiler.js';
export { InjectionError, type InjectionErrorCode } from './injection-error.js';
export { injectionPatch } from './injection-patch.js';
export type { InjectionDecision } from './injection-required.js';
export { readInjectionStatus, type InjectionStatus } from './injection-status.js';
export { isWholeInjectorConfig, parseInjectorConfig, parseSingleTemplateConfig, type InjectorConfig, type InjectorConfigText } from './injector-config.js';
export { injectResources, kubeInjectTemplate, type InjectedResources, type InjectPodTemplate, type PodTemplateResult } from './inject-resources.js';
export type { Pod } from './pod.js';
export { proxyImageType, valuesProxyImage } from './proxy-image.js';
export { effectiveProxyConfig } from './template-data.js';
export { uninjectPod } from './uninject.js';
export { annotationValueProblem } from './validate-annotations.js';
export type { WorkloadMeta } from './workload-meta.js';
