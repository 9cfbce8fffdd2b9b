import type { InjectorConfig } from './injector-config.js';
import { ANNOTATIONS, IGNORED_NAMESPACES, LABELS, selectorMatches } from '../../names/index.js';
import { stringMap, type Pod } from './pod.js';

/** Whether a pod gets a sidecar, and why (for logs and the kube-inject skip messages). */
export interface InjectionDecision {
  readonly inject: boolean;
  readonly reason: string;
}

const YES = ['y', 'yes', 'true', 'on'];

/**
 * The reference's decision order: host networking, then the cluster's own namespaces, then the
 * pod's explicit `sidecar.mesh.io/inject` (the label wins over the annotation), then the never and
 * always selectors, then the policy.
 */
export function injectionRequired(
  config: Pick<InjectorConfig, 'policy' | 'neverInjectSelector' | 'alwaysInjectSelector'>,
  pod: Pod,
  namespace: string,
): InjectionDecision {
  const spec = pod['spec'] as Record<string, unknown> | undefined;
  if (spec?.['hostNetwork'] === true) return { inject: false, reason: 'host networking enabled' };
  if (IGNORED_NAMESPACES.includes(namespace)) return { inject: false, reason: `namespace ${namespace} is ignored` };
  const metadata = (pod['metadata'] ?? {}) as Record<string, unknown>;
  const labels = stringMap(metadata['labels']);
  const annotations = stringMap(metadata['annotations']);

  const label = labels[LABELS.inject];
  if (label === 'true') return { inject: true, reason: `label ${LABELS.inject}=true` };
  if (label === 'false') return { inject: false, reason: `label ${LABELS.inject}=false` };
  const annotation = (annotations[ANNOTATIONS.inject] ?? '').toLowerCase();
  if (annotation !== '') {
    const inject = YES.includes(annotation);
    return { inject, reason: `annotation ${ANNOTATIONS.inject}=${annotations[ANNOTATIONS.inject] ?? ''}` };
  }

  if (config.neverInjectSelector.some((selector) => selectorMatches(selector, labels))) {
    return { inject: false, reason: 'pod matches neverInjectSelector' };
  }
  if (config.alwaysInjectSelector.some((selector) => selectorMatches(selector, labels))) {
    return { inject: true, reason: 'pod matches alwaysInjectSelector' };
  }
  switch (config.policy) {
    case 'enabled':
      return { inject: true, reason: 'policy enabled' };
    case 'disabled':
      return { inject: false, reason: 'policy disabled' };
    default:
      return { inject: false, reason: `illegal value for autoInject: ${config.policy}` };
  }
}
