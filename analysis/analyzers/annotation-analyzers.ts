import type { V1PodSpec } from '@kubernetes/client-node';
import { ANNOTATIONS, INIT_CONTAINER, LABELS } from '../../names/index.js';
import { annotationValueProblem } from '../../webhook/inject/index.js';
import type { Analyzer, AnalysisContext } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { ALWAYS_IGNORED_ANNOTATIONS, ANNOTATION_CATALOGUE, isMeshAnnotation } from './annotation-catalogue.js';
import { annotationsOf } from './kube-objects.js';

type AnnotatedKind = 'Pod' | 'Service' | 'Namespace' | 'Deployment';

type Metadata = { readonly annotations?: Record<string, string>; readonly labels?: Record<string, string> };

/**
 * As the reference judges each mesh annotation (those the injector and gateway controller set
 * aside): MSH0108 unknown to the catalogue; MSH0135 deprecated (not the inject annotation beside
 * the inject label); then, unless it belongs on any kind, MSH0107 misplaced or MSH0125 a value
 * injection would refuse. `kind` is the kind the annotations are judged for: a Deployment's pod
 * template (which the reference does not read) is a Pod.
 */
function checkAnnotations(context: AnalysisContext, resource: Resource<unknown>, metadata: Metadata | undefined, kind: string): void {
  const annotations = metadata?.annotations ?? {};
  for (const key of Object.keys(annotations).sort()) {
    if (!isMeshAnnotation(key) || ALWAYS_IGNORED_ANNOTATIONS.has(key)) continue;
    const info = ANNOTATION_CATALOGUE.get(key);
    if (info === undefined) {
      context.report('UnknownAnnotation', resource, `Unknown annotation: ${key}`);
      continue;
    }
    if (info.deprecated !== undefined && !(key === LABELS.inject && metadata?.labels?.[LABELS.inject] !== undefined))
      context.report('DeprecatedAnnotation', resource, `Annotation "${key}" has been deprecated${info.deprecated} and may not work in future mesh versions.`);
    if (info.kinds.includes('Any')) continue;
    if (!info.kinds.includes(kind)) {
      context.report('MisplacedAnnotation', resource, `Misplaced annotation: ${key} can only be applied to ${info.kinds.join(', ')}`);
      continue;
    }
    const problem = annotationValueProblem(key, annotations[key] ?? '');
    if (problem !== undefined) context.report('InvalidAnnotation', resource, `Invalid annotation ${key}: ${problem}`);
  }
}

const templateOf = (object: unknown): { metadata?: Metadata; spec?: V1PodSpec } | undefined =>
  (object as { spec?: { template?: { metadata?: Metadata; spec?: V1PodSpec } } }).spec?.template;

function annotationsAnalyzer(kind: AnnotatedKind): Analyzer {
  return {
    name: `annotations.K8sAnalyzer.${kind}`,
    description: `Checks for misplaced, unknown, deprecated and invalid mesh annotations on ${kind} resources`,
    inputs: [kind],
    analyze(context) {
      for (const resource of context.read(kind) as readonly Resource<{ metadata?: Metadata }>[]) {
        checkAnnotations(context, resource, resource.object.metadata, kind);
        if (kind === 'Deployment') checkAnnotations(context, resource, templateOf(resource.object)?.metadata, 'Pod');
      }
    },
  };
}

/** One analyzer per Kubernetes kind, so that analysing files with Deployments alone still checks them. */
export const ANNOTATION_ANALYZERS: readonly Analyzer[] = (['Deployment', 'Namespace', 'Pod', 'Service'] as const).map(annotationsAnalyzer);

/** Annotations the injector itself writes when the capture is done by the CNI plugin (no init container): not the user's choice. */
const CNI_WRITTEN: ReadonlySet<string> = new Set([
  ANNOTATIONS.interceptionMode,
  ANNOTATIONS.includeInboundPorts,
  ANNOTATIONS.excludeInboundPorts,
  ANNOTATIONS.includeOutboundIPRanges,
]);

/**
 * MSH0136: a mesh annotation of an Alpha feature, on a Namespace, Service, Pod or Deployment
 * (its own annotations, as the reference reads them). Those the injector and gateway controller
 * set are not reported, nor on a pod without the capture init container those the injector
 * writes for the CNI plugin. As in the reference, this analyzer is not among the default ones
 * (too many findings of annotations set by default): `x precheck` runs it.
 */
export const alphaAnnotationAnalyzer: Analyzer = {
  name: 'annotations.AlphaAnalyzer',
  description: 'Checks for alpha mesh annotations in Kubernetes resources',
  inputs: ['Namespace', 'Service', 'Pod', 'Deployment'],
  analyze(context) {
    for (const kind of ['Namespace', 'Service', 'Pod', 'Deployment'] as const) {
      for (const resource of context.read(kind) as readonly Resource<{ metadata?: Metadata; spec?: V1PodSpec }>[]) {
        const cni = kind === 'Pod' && !(resource.object.spec?.initContainers ?? []).some((container) => container.name === INIT_CONTAINER);
        for (const key of Object.keys(annotationsOf(resource.object)).sort()) {
          if (!isMeshAnnotation(key) || ALWAYS_IGNORED_ANNOTATIONS.has(key) || (cni && CNI_WRITTEN.has(key))) continue;
          if (ANNOTATION_CATALOGUE.get(key)?.status !== 'Alpha') continue;
          context.report('AlphaAnnotation', resource, `Annotation "${key}" is part of an alpha-phase feature and may be incompletely supported.`);
        }
      }
    }
  },
};
