import type { V1Deployment, V1PodSpec, V1Service } from '@kubernetes/client-node';
import { IGNORED_NAMESPACES, LABELS, PROXY_CONTAINER, labelsMatch } from '../../names/index.js';
import type { Analyzer, AnalysisContext } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { applicationContainers, declaredProtocol, isMeshControlPlane, isSystemNamespace, portProtocol } from './kube-objects.js';
import { namespaceRevision } from './injection-analyzers.js';

/**
 * MSH0118: Service ports whose name does not start with a protocol (`http`, `grpc-web`, `tcp-db`…)
 * and have no appProtocol. MSH0150 instead for an ExternalName Service, whose port named `tcp`
 * is flagged too, as the reference does.
 */
export const portNameAnalyzer: Analyzer = {
  name: 'service.PortNameAnalyzer',
  description: 'Checks the port names associated with each service',
  inputs: ['Service'],
  analyze(context) {
    for (const service of context.read('Service')) {
      if (isSystemNamespace(service.namespace, context.rootNamespace, IGNORED_NAMESPACES) || isMeshControlPlane(service.object)) continue;
      for (const port of service.object.spec?.ports ?? []) {
        const externalName = service.object.spec?.type === 'ExternalName';
        if (declaredProtocol(port) !== undefined && !(externalName && port.name === 'tcp')) continue;
        if (externalName) {
          const message =
            'Port name for ExternalName service is invalid. Proxy may prevent tcp named ports and unmatched traffic for ports serving TCP protocol from being forwarded correctly';
          context.report('ExternalNameServiceTypeInvalidPortName', service, message);
          continue;
        }
        const target = port.targetPort === undefined ? String(port.port) : String(port.targetPort as number | string);
        context.report(
          'PortNameIsNotUnderNamingConvention',
          service,
          `Port name ${port.name ?? ''} (port: ${port.port}, targetPort: ${target}) doesn't follow the naming convention of mesh port.`,
        );
      }
    }
  },
};

/**
 * MSH0116: a Deployment whose pods several Services select with one port carrying different
 * protocols (as the daemon reads them: appProtocol or the name prefix; UDP and SCTP as themselves);
 * MSH0117: a Deployment of an injected namespace that no Service selects; MSH0137: a Deployment
 * in the mesh whose Services send one targetPort from different ports.
 */
export const multiServiceAnalyzer: Analyzer = {
  name: 'deployment.MultiServiceAnalyzer',
  description: 'Checks associations between services and pods',
  inputs: ['Deployment', 'Service', 'Namespace'],
  analyze(context) {
    const services = context.read('Service');
    const injected = new Set(
      context
        .read('Namespace')
        .filter((n) => namespaceRevision(n.object) !== undefined)
        .map((n) => n.name),
    );
    for (const deployment of context.read('Deployment')) {
      const labels = deployment.object.spec?.template.metadata?.labels ?? {};
      const selecting = services.filter(
        (s) => s.namespace === deployment.namespace && Object.keys(s.object.spec?.selector ?? {}).length > 0 && labelsMatch(s.object.spec?.selector, labels),
      );
      if (selecting.length === 0) {
        if (injected.has(deployment.namespace) && !isSystemNamespace(deployment.namespace, context.rootNamespace, IGNORED_NAMESPACES)) {
          context.report(
            'DeploymentRequiresServiceAssociated',
            deployment,
            'No service associated with this deployment. Service mesh deployments must be associated with a service.',
          );
        }
        continue;
      }
      if (deploymentInMesh(deployment.object, injected.has(deployment.namespace))) reportConflictingTargetPorts(context, deployment, selecting);
      const byPort = new Map<number, Map<string, string>>();
      for (const service of selecting) {
        for (const port of service.object.spec?.ports ?? []) {
          const protocol = (port.protocol ?? 'TCP') !== 'TCP' ? (port.protocol ?? '') : (declaredProtocol(port) ?? portProtocol(port));
          byPort.set(port.port, (byPort.get(port.port) ?? new Map()).set(service.name, protocol));
        }
      }
      for (const [port, protocols] of [...byPort].sort(([a], [b]) => a - b)) {
        if (new Set(protocols.values()).size < 2) continue;
        const names = [...protocols.keys()].sort();
        context.report(
          'DeploymentAssociatedToMultipleServices',
          deployment,
          `This deployment ${deployment.name} is associated with multiple services using port ${port} but different protocols: [${names.join(' ')}]`,
        );
      }
    }
  },
};

/**
 * Whether a Deployment's pods get the proxy, as the reference decides it: a proxy container with an
 * image in the template, else the template's inject label, else its inject annotation (`true` or
 * not), else the namespace's injection.
 */
function deploymentInMesh(deployment: V1Deployment, namespaceInjected: boolean): boolean {
  const template = deployment.spec?.template;
  if ((template?.spec?.containers ?? []).some((container) => container.name === PROXY_CONTAINER && (container.image ?? '') !== '')) return true;
  for (const marks of [template?.metadata?.labels, template?.metadata?.annotations]) {
    const value = marks?.[LABELS.inject];
    if (value !== undefined) return value === 'true';
  }
  return namespaceInjected;
}

/**
 * MSH0137, as the reference decides it: the Services' ports grouped by targetPort as written (a
 * name is not resolved; none or 0 is the port itself), one Service kept per port number; a
 * targetPort reached from more than one port number is reported, one Service's own ports included.
 */
function reportConflictingTargetPorts(context: AnalysisContext, deployment: Resource<V1Deployment>, services: readonly Resource<V1Service>[]): void {
  const byTarget = new Map<string, Map<number, string>>();
  for (const service of services) {
    for (const port of service.object.spec?.ports ?? []) {
      const written = port.targetPort === undefined ? '' : String(port.targetPort as number | string);
      const target = written === '' || written === '0' ? String(port.port) : written;
      byTarget.set(target, (byTarget.get(target) ?? new Map<number, string>()).set(port.port, `${service.namespace}/${service.name}`));
    }
  }
  for (const [target, ports] of byTarget) {
    if (ports.size < 2) continue;
    const names = [...ports.values()].sort();
    const numbers = [...ports.keys()].sort((a, b) => a - b);
    const message = `This deployment ${deployment.name} is associated with multiple services [${names.join(' ')}] using targetPort "${target}" but different ports: [${numbers.join(' ')}].`;
    context.report('DeploymentConflictingPorts', deployment, message);
  }
}

const PROXY_UID = 1337;
/** The installer's own container runs as the proxy's UID too, as the reference's does. */
const OPERATOR_CONTAINER = 'mesh-operator';

/** As the reference reads it: the pod's own `runAsUser`, or one an application container sets itself. */
function usesProxyUid(spec: V1PodSpec | undefined): boolean {
  if (spec?.securityContext?.runAsUser === PROXY_UID) return true;
  return applicationContainers(spec, PROXY_CONTAINER).some(
    (container) => container.name !== OPERATOR_CONTAINER && container.securityContext?.runAsUser === PROXY_UID,
  );
}

function reportUid(context: AnalysisContext, resource: Resource<{ metadata?: { labels?: Record<string, string> } }>, spec: V1PodSpec | undefined): void {
  // The mesh's own daemon and gateways run as the proxy's UID by design.
  if (isMeshControlPlane(resource.object)) return;
  if (usesProxyUid(spec)) context.report('InvalidApplicationUID', resource, 'User ID (UID) 1337 is reserved for the sidecar proxy.');
}

/** MSH0144: application containers running as UID 1337, the proxy's: their traffic would bypass the proxy. */
export const applicationUidAnalyzer: Analyzer = {
  name: 'applicationUID.Analyzer',
  description: 'Checks invalid application UID in pods',
  inputs: ['Pod'],
  analyze(context) {
    for (const pod of context.read('Pod')) reportUid(context, pod, pod.object.spec);
  },
};

/** MSH0144 for the pod templates of Deployments. */
export const deploymentApplicationUidAnalyzer: Analyzer = {
  name: 'applicationUID.DeploymentAnalyzer',
  description: 'Checks invalid application UID in the pod templates of deployments',
  inputs: ['Deployment'],
  analyze(context) {
    for (const deployment of context.read('Deployment')) reportUid(context, deployment, deployment.object.spec?.template.spec);
  },
};
