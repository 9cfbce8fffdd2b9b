import { ANALYZE_SUPPRESS_ANNOTATION, ANNOTATIONS, DEPRECATED_ANNOTATIONS } from '../../names/index.js';
import { annotationValueProblem } from '../../webhook/inject/index.js';
import type { Analyzer, AnalysisContext } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { annotationsOf } from './kube-objects.js';

type AnnotatedKind = 'Pod' | 'Service' | 'Namespace' | 'Deployment';

interface AnnotationInfo {
  /** The kinds the annotation belongs on; empty for any kind. */
  readonly kinds: readonly string[];
  /** Why it is deprecated (what to use instead), when it is. */
  readonly deprecated?: string;
}

const MESH_DOMAIN = /(^|\.)mesh\.io$/;

const isMeshAnnotation = (key: string): boolean => key.includes('/') && MESH_DOMAIN.test(key.slice(0, key.indexOf('/')));

/** The mesh annotations we define, where they belong, and the deprecated ones. */
const KNOWN: ReadonlyMap<string, AnnotationInfo> = new Map<string, AnnotationInfo>([
  ...Object.values(ANNOTATIONS)
    .filter(isMeshAnnotation)
    .map((key): [string, AnnotationInfo] => [key, { kinds: ['Pod'] }]),
  [ANALYZE_SUPPRESS_ANNOTATION, { kinds: [] }],
  [DEPRECATED_ANNOTATIONS.readinessApplicationPorts, { kinds: ['Pod'], deprecated: ': the agent reads the probes of the pod itself' }],
  [DEPRECATED_ANNOTATIONS.discoveryAddress, { kinds: ['Pod'], deprecated: ` in favor of discoveryAddress in ${ANNOTATIONS.proxyConfig}` }],
]);

/**
 * MSH0108 unknown mesh annotations (any key of a `mesh.io` domain we do not define), MSH0107
 * misplaced (a pod annotation on a Service…), MSH0135 deprecated, MSH0125 values injection would
 * refuse. `kind` is the kind the annotations are judged for (a Deployment's pod template is a Pod).
 */
function checkAnnotations(context: AnalysisContext, resource: Resource<unknown>, annotations: Readonly<Record<string, string>>, kind: string): void {
  for (const key of Object.keys(annotations).sort()) {
    if (!isMeshAnnotation(key)) continue;
    const info = KNOWN.get(key);
    if (info === undefined) {
      context.report('UnknownAnnotation', resource, `Unknown annotation: ${key}`);
      continue;
    }
    if (info.kinds.length > 0 && !info.kinds.includes(kind)) {
      context.report('MisplacedAnnotation', resource, `Misplaced annotation: ${key} can only be applied to ${info.kinds.join(', ')}`);
      continue;
    }
    if (info.deprecated !== undefined)
      context.report('DeprecatedAnnotation', resource, `Annotation "${key}" has been deprecated${info.deprecated} and may not work in future mesh versions.`);
    const problem = annotationValueProblem(key, annotations[key] ?? '');
    if (problem !== undefined) context.report('InvalidAnnotation', resource, `Invalid annotation ${key}: ${problem}`);
  }
}

function annotationsAnalyzer(kind: AnnotatedKind): Analyzer {
  return {
    name: `annotations.K8sAnalyzer.${kind}`,
    description: `Checks for misplaced, unknown, deprecated and invalid mesh annotations on ${kind} resources`,
    inputs: [kind],
    analyze(context) {
      for (const resource of context.read(kind) as readonly Resource<{ metadata?: { annotations?: Record<string, string> } }>[]) {
        checkAnnotations(context, resource, annotationsOf(resource.object), kind);
        if (kind === 'Deployment') {
          const template = (resource.object as { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } }).spec?.template;
          checkAnnotations(context, resource, template?.metadata?.annotations ?? {}, 'Pod');
        }
      }
    },
  };
}

/** One analyzer per Kubernetes kind, so that analysing files with Deployments alone still checks them. */
export const ANNOTATION_ANALYZERS: readonly Analyzer[] = (['Deployment', 'Namespace', 'Pod', 'Service'] as const).map(annotationsAnalyzer);
