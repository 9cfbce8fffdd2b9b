import { groupKindOf } from './group-kind.js';

/**
 * Built-in kinds without a namespace, by group-kind. Everything else (our mesh kinds included) is
 * namespaced, so a file that omits `metadata.namespace` lands in `default`, as `kubectl apply` does.
 */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
  'Namespace',
  'Node',
  'PersistentVolume',
  'ComponentStatus',
  'CustomResourceDefinition.apiextensions.k8s.io',
  'APIService.apiregistration.k8s.io',
  'ClusterRole.rbac.authorization.k8s.io',
  'ClusterRoleBinding.rbac.authorization.k8s.io',
  'MutatingWebhookConfiguration.admissionregistration.k8s.io',
  'ValidatingWebhookConfiguration.admissionregistration.k8s.io',
  'ValidatingAdmissionPolicy.admissionregistration.k8s.io',
  'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io',
  'CertificateSigningRequest.certificates.k8s.io',
  'TokenReview.authentication.k8s.io',
  'SelfSubjectReview.authentication.k8s.io',
  'SelfSubjectAccessReview.authorization.k8s.io',
  'SelfSubjectRulesReview.authorization.k8s.io',
  'SubjectAccessReview.authorization.k8s.io',
  'StorageClass.storage.k8s.io',
  'CSIDriver.storage.k8s.io',
  'CSINode.storage.k8s.io',
  'VolumeAttachment.storage.k8s.io',
  'PriorityClass.scheduling.k8s.io',
  'RuntimeClass.node.k8s.io',
  'IngressClass.networking.k8s.io',
  'FlowSchema.flowcontrol.apiserver.k8s.io',
  'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io',
  'GatewayClass.gateway.networking.k8s.io',
]);

export function isClusterScoped(apiVersion: string, kind: string, extra?: ReadonlySet<string>): boolean {
  const groupKind = groupKindOf(apiVersion, kind);
  return CLUSTER_SCOPED_KINDS.has(groupKind) || (extra?.has(groupKind) ?? false);
}
