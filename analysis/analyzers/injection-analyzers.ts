import type { V1ConfigMap, V1Container, V1Namespace, V1Pod } from '@kubernetes/client-node';
import { ANNOTATIONS, DEFAULT_REVISION, IGNORED_NAMESPACES, INJECTOR_CONFIG_MAP_NAME, LABELS, PROXY_CONTAINER } from '../../names/index.js';
import { effectiveProxyConfig, proxyImageType, readInjectionStatus, valuesProxyImage, type Pod } from '../../webhook/inject/index.js';
import type { MeshConfig } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { annotationsOf, isSystemNamespace, labelsOf } from './kube-objects.js';

/** The revision a namespace asks to inject its pods: its `mesh.io/rev`, `default` for `mesh-injection=enabled`, else none. */
export function namespaceRevision(namespace: V1Namespace): string | undefined {
  const labels = labelsOf(namespace);
  const revision = labels[LABELS.revision];
  if (revision !== undefined && revision !== '') return revision;
  return labels[LABELS.namespaceInjection] === 'enabled' ? 'default' : undefined;
}

/** Whether the default revision's injector injects namespaces without a label (its ConfigMap's values say so). */
function injectsByDefault(configMaps: readonly Resource<V1ConfigMap>[], rootNamespace: string): boolean {
  const values = configMaps.find((configMap) => configMap.namespace === rootNamespace && configMap.name === INJECTOR_CONFIG_MAP_NAME)?.object.data?.['values'];
  if (values === undefined) return false;
  try {
    return (
      (JSON.parse(values) as { sidecarInjectorWebhook?: { enableNamespacesByDefault?: unknown } }).sidecarInjectorWebhook?.enableNamespacesByDefault === true
    );
  } catch {
    return false;
  }
}

/** The pod's proxy containers: among its containers or, a native sidecar, its init containers (as the reference, by name alone). */
function proxyContainers(pod: V1Pod): V1Container[] {
  return [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].filter((container) => container.name === PROXY_CONTAINER);
}

/** Whether the pod runs the proxy: a proxy container with an image. */
export function hasProxy(pod: V1Pod): boolean {
  return proxyContainers(pod).some((container) => (container.image ?? '') !== '');
}

/** A pod that opts out (its inject label, else its annotation, `false` in any case), or runs on the host's network. */
function optedOut(pod: V1Pod): boolean {
  const inject = labelsOf(pod)[LABELS.inject] ?? annotationsOf(pod)[ANNOTATIONS.inject];
  return inject?.toLowerCase() === 'false' || pod.spec?.hostNetwork === true;
}

function namespacesByName(namespaces: readonly Resource<V1Namespace>[]): Map<string, V1Namespace> {
  return new Map(namespaces.map((namespace) => [namespace.name, namespace.object]));
}

/**
 * As the reference checks namespaces (system namespaces aside): MSH0123 when more than one
 * injection label is in force (`mesh.io/rev` counts beside `mesh-injection` only when that says
 * `enabled`); MSH0102 for a namespace with neither label, or MSH0148 instead when the default
 * injector injects every namespace (`sidecarInjectorWebhook.enableNamespacesByDefault`).
 * MSH0103: a pod of an injected namespace without the proxy (pods that opt out, and host-network
 * pods, aside).
 */
export const injectionAnalyzer: Analyzer = {
  name: 'injection.Analyzer',
  description: 'Checks that namespaces are labelled for injection and that their pods have the proxy',
  inputs: ['Namespace', 'Pod', 'ConfigMap'],
  analyze(context) {
    const pods = context.read('Pod');
    const namespaces = context.read('Namespace');
    const byDefault = injectsByDefault(context.read('ConfigMap'), context.rootNamespace);
    for (const resource of namespaces) {
      const name = resource.name;
      if (isSystemNamespace(name, context.rootNamespace, IGNORED_NAMESPACES)) continue;
      const labels = labelsOf(resource.object);
      const injection = labels[LABELS.namespaceInjection];
      const revision = labels[LABELS.revision];
      const inForce = [
        ...(injection !== undefined ? [`${LABELS.namespaceInjection}=${injection}`] : []),
        ...(revision !== undefined && (injection === undefined || injection === 'enabled') ? [`${LABELS.revision}=${revision}`] : []),
      ];
      if (inForce.length > 1) {
        const message = `The namespace has more than one type of injection labels [${inForce.join(' ')}], which may lead to undefined behavior. Make sure only one injection label exists.`;
        context.report('NamespaceMultipleInjectionLabels', resource, message);
      }
      if ((injection === undefined || injection === '') && revision === undefined) {
        if (byDefault) {
          context.report(
            'NamespaceInjectionEnabledByDefault',
            resource,
            'is enabled for mesh injection, as the mesh is installed with enableNamespacesByDefault as true.',
          );
          continue;
        }
        const message = `The namespace is not enabled for mesh injection. Run 'kubectl label namespace ${name} ${LABELS.namespaceInjection}=enabled' to enable it, or 'kubectl label namespace ${name} ${LABELS.namespaceInjection}=disabled' to explicitly mark it as not needing injection.`;
        context.report('NamespaceNotInjected', resource, message);
      }
    }
    const byName = namespacesByName(namespaces);
    for (const pod of pods) {
      const namespace = byName.get(pod.namespace);
      if (namespace === undefined || namespaceRevision(namespace) === undefined || hasProxy(pod.object) || optedOut(pod.object)) continue;
      if (isSystemNamespace(pod.namespace, context.rootNamespace, IGNORED_NAMESPACES)) continue;
      context.report(
        'PodMissingProxy',
        pod,
        `The pod ${pod.name} is missing the mesh proxy. This can often be resolved by restarting or redeploying the workload.`,
      );
    }
  },
};

/** The revision that injected a pod: its `mesh.io/rev` label, else the status annotation's. */
function podRevision(pod: V1Pod): string | undefined {
  const label = labelsOf(pod)[LABELS.revision];
  if (label !== undefined && label !== '') return label;
  return readInjectionStatus(pod as unknown as Pod)?.revision;
}

/** MSH1003: an injected pod whose revision differs from the one its namespace now selects (after a revision move). */
export const revisionAnalyzer: Analyzer = {
  name: 'injection.RevisionAnalyzer',
  description: 'Checks that injected pods run the revision their namespace selects',
  inputs: ['Namespace', 'Pod'],
  analyze(context) {
    const byName = namespacesByName(context.read('Namespace'));
    for (const pod of context.read('Pod')) {
      const namespace = byName.get(pod.namespace);
      const expected = namespace === undefined ? undefined : namespaceRevision(namespace);
      const actual = podRevision(pod.object);
      if (expected === undefined || actual === undefined || !hasProxy(pod.object) || actual === expected) continue;
      const message = `The pod was injected by revision "${actual}" but its namespace selects revision "${expected}". Restart or redeploy the workload to move it to "${expected}".`;
      context.report('ProxyRevisionMismatch', pod, message);
    }
  },
};

/** The injector's values (its ConfigMap's `values`), or none when they are not JSON. */
function injectorValues(valuesText: string | undefined): Record<string, unknown> | undefined {
  if (valuesText === undefined) return undefined;
  try {
    const values: unknown = JSON.parse(valuesText);
    return typeof values === 'object' && values !== null && !Array.isArray(values) ? (values as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The image type injection gives the pod (its annotations over the mesh's defaultConfig), or none when its proxy config annotation does not parse. */
function podImageType(pod: V1Pod, meshConfig: MeshConfig, values: Record<string, unknown>): string {
  const annotations = annotationsOf(pod);
  try {
    return proxyImageType(annotations, effectiveProxyConfig(meshConfig.defaultConfig, annotations[ANNOTATIONS.proxyConfig]), values);
  } catch {
    return '';
  }
}

/**
 * MSH0158, per namespace as the reference reports it now (its per-pod IST0105 is retired): the
 * injected pods whose proxy image is neither the image of the injector ConfigMap of the
 * namespace's revision (`mesh-sidecar-injector[-<revision>]` in the root namespace) nor that image
 * of the pod's image type (`-distroless`…), as injection builds it. Native sidecars (the proxy an
 * init container) count; pods choosing their image by annotation are not checked.
 */
export const imageAnalyzer: Analyzer = {
  name: 'injection.ImageAnalyzer',
  description: 'Checks the image of auto-injection configured with the running proxies on pods',
  inputs: ['Namespace', 'Pod', 'ConfigMap', 'MeshConfig'],
  analyze(context) {
    const injectors = new Map<string, Record<string, unknown>>();
    for (const configMap of context.read('ConfigMap')) {
      if (configMap.namespace !== context.rootNamespace || !configMap.name.startsWith(INJECTOR_CONFIG_MAP_NAME)) continue;
      const revision = configMap.name === INJECTOR_CONFIG_MAP_NAME ? DEFAULT_REVISION : configMap.name.slice(`${INJECTOR_CONFIG_MAP_NAME}-`.length);
      const values = injectorValues(configMap.object.data?.['values']);
      if (values !== undefined) injectors.set(revision, values);
    }
    const meshConfig = context.read('MeshConfig');
    const namespaces = context.read('Namespace');
    const byName = namespacesByName(namespaces);
    const mismatched = new Map<string, Set<string>>();
    for (const pod of context.read('Pod')) {
      const namespace = byName.get(pod.namespace);
      const revision = namespace === undefined ? undefined : namespaceRevision(namespace);
      const values = revision === undefined ? undefined : injectors.get(revision);
      if (values === undefined || annotationsOf(pod.object)[ANNOTATIONS.proxyImage] !== undefined) continue;
      const expected = new Set([valuesProxyImage(values), valuesProxyImage(values, podImageType(pod.object, meshConfig, values))]);
      if (proxyContainers(pod.object).some((container) => !expected.has(container.image ?? ''))) {
        mismatched.set(pod.namespace, (mismatched.get(pod.namespace) ?? new Set<string>()).add(pod.name));
      }
    }
    for (const namespace of namespaces) {
      const pods = mismatched.get(namespace.name);
      if (pods === undefined) continue;
      const message = `The mesh proxy images of the pods running in the namespace do not match the image defined in the injection configuration (pod names: [${[...pods].sort().join(' ')}]). This often happens after upgrading the mesh control-plane and can be fixed by redeploying the pods.`;
      context.report('PodsProxyImageMismatchInNamespace', namespace, message);
    }
  },
};
