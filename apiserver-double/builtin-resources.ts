import { builtinListStrategy } from '../kube-patch/index.js';
import { POD_COLUMNS } from './pod-columns.js';
import { STANDARD_VERBS } from './resource-type.js';
import type { PrinterColumn, ResourceType } from './resource-type.js';

interface BuiltinSpec {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs?: string[];
  subresources?: string[];
  columns?: PrinterColumn[];
  selectableFields?: string[];
  deleteReturnsObject?: boolean;
  nameRule?: ResourceType['nameRule'];
  ephemeral?: boolean;
}

const countKeys =
  (field: string) =>
  (o: Record<string, unknown>): number => {
    const a = o[field];
    const b = field === 'data' ? o['binaryData'] : undefined;
    const n = (v: unknown): number => (v && typeof v === 'object' ? Object.keys(v).length : 0);
    return n(a) + n(b);
  };

const col = (name: string, jsonPath: string, type = 'string', priority = 0): PrinterColumn => ({ name, jsonPath, type, priority });

// One resource type per line: the formatter leaves the table alone.
// prettier-ignore
const SPECS: BuiltinSpec[] = [
  { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false, shortNames: ['ns'], subresources: ['status', 'finalize'], columns: [col('Status', '.status.phase')], deleteReturnsObject: true, nameRule: 'label', selectableFields: ['status.phase'] },
  { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true, shortNames: ['cm'], columns: [{ name: 'Data', type: 'string', jsonPath: '.data', compute: countKeys('data') }] },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true, columns: [col('Type', '.type'), { name: 'Data', type: 'string', jsonPath: '.data', compute: countKeys('data') }], selectableFields: ['type'] },
  { group: '', version: 'v1', kind: 'Service', plural: 'services', namespaced: true, shortNames: ['svc'], categories: ['all'], subresources: ['status'], columns: [col('Type', '.spec.type'), col('Cluster-IP', '.spec.clusterIP')], deleteReturnsObject: true, nameRule: 'label' },
  { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true, shortNames: ['po'], categories: ['all'], subresources: ['status', 'log', 'proxy', 'portforward'], columns: [...POD_COLUMNS], selectableFields: ['spec.nodeName', 'spec.serviceAccountName', 'status.phase', 'status.podIP'], deleteReturnsObject: true },
  { group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', namespaced: true, shortNames: ['ep'] },
  { group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true, shortNames: ['sa'], subresources: ['token'], deleteReturnsObject: true },
  { group: '', version: 'v1', kind: 'Node', plural: 'nodes', namespaced: false, shortNames: ['no'], subresources: ['status'], deleteReturnsObject: false },
  { group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true, shortNames: ['ev'], selectableFields: ['involvedObject.kind', 'involvedObject.name', 'involvedObject.namespace', 'involvedObject.uid', 'reason', 'type'] },
  { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', plural: 'endpointslices', namespaced: true, columns: [col('AddressType', '.addressType')] },
  { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true, columns: [col('Holder', '.spec.holderIdentity')] },
  { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false, shortNames: ['crd', 'crds'], categories: ['api-extensions'], subresources: ['status'], columns: [col('Created At', '.metadata.creationTimestamp')] },
  { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenReview', plural: 'tokenreviews', namespaced: false, verbs: ['create'], ephemeral: true, nameRule: 'path' },
  { group: 'authorization.k8s.io', version: 'v1', kind: 'SelfSubjectAccessReview', plural: 'selfsubjectaccessreviews', namespaced: false, verbs: ['create'], ephemeral: true, nameRule: 'path' },
  { group: 'authorization.k8s.io', version: 'v1', kind: 'SubjectAccessReview', plural: 'subjectaccessreviews', namespaced: false, verbs: ['create'], ephemeral: true, nameRule: 'path' },
  { group: 'certificates.k8s.io', version: 'v1', kind: 'CertificateSigningRequest', plural: 'certificatesigningrequests', namespaced: false, shortNames: ['csr'], subresources: ['status', 'approval'], columns: [col('SignerName', '.spec.signerName'), col('Requestor', '.spec.username')], selectableFields: ['spec.signerName'] },
  { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations', namespaced: false, categories: ['api-extensions'], columns: [{ name: 'Webhooks', type: 'integer', jsonPath: '.webhooks', compute: (o) => (Array.isArray(o['webhooks']) ? o['webhooks'].length : 0) }] },
  { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations', namespaced: false, categories: ['api-extensions'], columns: [{ name: 'Webhooks', type: 'integer', jsonPath: '.webhooks', compute: (o) => (Array.isArray(o['webhooks']) ? o['webhooks'].length : 0) }] },
  { group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true, shortNames: ['deploy'], categories: ['all'], subresources: ['status'], columns: [col('Up-to-date', '.status.updatedReplicas', 'integer'), col('Available', '.status.availableReplicas', 'integer')] },
  { group: 'apps', version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', namespaced: true, shortNames: ['sts'], categories: ['all'], subresources: ['status'] },
  { group: 'apps', version: 'v1', kind: 'DaemonSet', plural: 'daemonsets', namespaced: true, shortNames: ['ds'], categories: ['all'], subresources: ['status'] },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles', namespaced: true, nameRule: 'path' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings', namespaced: true, nameRule: 'path' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false, nameRule: 'path' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false, nameRule: 'path' },
  { group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', namespaced: true, shortNames: ['pdb'], subresources: ['status'] },
  { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers', namespaced: true, shortNames: ['hpa'], categories: ['all'], subresources: ['status'] },
];

function toResourceType(spec: BuiltinSpec): ResourceType {
  return {
    group: spec.group,
    versions: [spec.version],
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    plural: spec.plural,
    singular: spec.kind.toLowerCase(),
    namespaced: spec.namespaced,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    verbs: spec.verbs ?? STANDARD_VERBS,
    subresources: spec.subresources ?? [],
    custom: false,
    printerColumns: spec.columns ?? [],
    listStrategy: builtinListStrategy,
    selectableFields: spec.selectableFields ?? [],
    deleteReturnsObject: spec.deleteReturnsObject ?? false,
    nameRule: spec.nameRule ?? 'subdomain',
    ephemeral: spec.ephemeral ?? false,
  };
}

/** The kinds every API server double serves from the start. */
export function builtinResourceTypes(): ResourceType[] {
  return SPECS.map(toResourceType);
}
