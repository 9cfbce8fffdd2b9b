import { stringify } from 'yaml';
import { z } from 'zod';
import { LABELS } from '../names/index.js';
import { KINDS, KIND_NAMES, type KindName } from './kinds.js';
import { SPEC_SCHEMAS } from './resource-schemas.js';
import { sortSchemaKeys, toStructuralSchema, type StructuralSchema } from './structural-schema.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources: { status: Record<string, never> };
  additionalPrinterColumns: PrinterColumn[];
  schema: { openAPIV3Schema: StructuralSchema };
}

/** An `apiextensions.k8s.io/v1` CustomResourceDefinition, as far as the generator fills it. */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    scope: 'Namespaced';
    versions: CrdVersion[];
  };
}

const AGE_COLUMN: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'When the object was created (the server time of its creation timestamp).',
};

/** What `kubectl explain` shows for each kind, and the extra columns of `kubectl get`. */
const KIND_PRESENTATION: { readonly [K in KindName]: { description: string; columns: readonly PrinterColumn[] } } = {
  PeerAuthentication: {
    description:
      'Which traffic a workload accepts: mutual TLS, plain text or both. Applies mesh-wide in the root namespace, to a namespace, or to selected workloads, with per-port overrides.',
    columns: [{ name: 'Mode', type: 'string', jsonPath: '.spec.mtls.mode', description: 'The mutual TLS mode workloads accept.' }],
  },
  RequestAuthentication: {
    description:
      'The JSON Web Tokens a workload accepts: issuers, audiences, key sets and where tokens are read from. Requests with an invalid token are rejected; requests without one are left to authorization policies.',
    columns: [],
  },
  AuthorizationPolicy: {
    description:
      'Access control for workloads: requests matching the rules (sources, operations, conditions) are allowed, denied, audited or handed to an external authorizer.',
    columns: [{ name: 'Action', type: 'string', jsonPath: '.spec.action', description: 'What happens to matching requests (absent means ALLOW).' }],
  },
  DestinationRule: {
    description:
      'Policies for traffic to a service once routing has chosen it: load balancing, connection pools, outlier detection, client TLS, and named subsets of its endpoints.',
    columns: [{ name: 'Host', type: 'string', jsonPath: '.spec.host', description: 'The service the rule applies to.' }],
  },
  Gateway: {
    description: 'A load balancer at the edge of the mesh: the ports, protocols, hosts and TLS settings that selected gateway workloads expose.',
    columns: [],
  },
  VirtualService: {
    description:
      'Routing rules for traffic to a set of hosts: matches, destinations and weights, redirects, rewrites, retries, timeouts, fault injection and mirroring.',
    columns: [
      { name: 'Gateways', type: 'string', jsonPath: '.spec.gateways', description: 'The gateways (and "mesh" for sidecars) the routes apply to.' },
      { name: 'Hosts', type: 'string', jsonPath: '.spec.hosts', description: 'The hosts the routes apply to.' },
    ],
  },
  ServiceEntry: {
    description:
      'Adds a service to the mesh: its hosts, addresses and ports, whether it is inside or outside the mesh, how its endpoints are found (none, static, DNS), and the endpoints or the workloads selected for it.',
    columns: [
      { name: 'Hosts', type: 'string', jsonPath: '.spec.hosts', description: 'The hosts of the service.' },
      {
        name: 'Location',
        type: 'string',
        jsonPath: '.spec.location',
        description: 'Whether the service is outside the mesh or part of it (MESH_EXTERNAL or MESH_INTERNAL).',
      },
      {
        name: 'Resolution',
        type: 'string',
        jsonPath: '.spec.resolution',
        description: 'How the endpoints of the hosts are found (NONE, STATIC, DNS or DNS_ROUND_ROBIN).',
      },
    ],
  },
  WorkloadEntry: {
    description: 'A workload outside Kubernetes, such as a virtual machine: its address, ports, labels, network, locality and service account.',
    columns: [{ name: 'Address', type: 'string', jsonPath: '.spec.address', description: 'The address of the workload.' }],
  },
  WorkloadGroup: {
    description:
      'A template for the WorkloadEntries of a group of workloads outside Kubernetes (their labels, ports, service account) and the readiness probe their agents run.',
    columns: [],
  },
};

const STATUS_SCHEMA: StructuralSchema = {
  description: 'Written by the control plane: conditions and validation messages.',
  type: 'object',
  'x-kubernetes-preserve-unknown-fields': true,
};

function openApiSchema(kind: KindName): StructuralSchema {
  const spec = toStructuralSchema(z.toJSONSchema(SPEC_SCHEMAS[kind], { io: 'input' }));
  return sortSchemaKeys({
    type: 'object',
    required: ['spec'],
    properties: {
      spec: { description: KIND_PRESENTATION[kind].description, ...spec },
      status: STATUS_SCHEMA,
    },
  });
}

function buildCrd(kind: KindName): CustomResourceDefinition {
  const info = KINDS[kind];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    // Kept by `helm uninstall` of the base chart, which renders them as templates: deleting a CRD deletes every object of its kind.
    metadata: { name: `${info.plural}.${info.group}`, labels: { [LABELS.partOf]: 'mesh' }, annotations: { 'helm.sh/resource-policy': 'keep' } },
    spec: {
      group: info.group,
      names: {
        kind: info.kind,
        listKind: `${info.kind}List`,
        plural: info.plural,
        singular: info.singular,
        shortNames: [...info.shortNames],
        categories: [...info.categories],
      },
      scope: 'Namespaced',
      // Newest first, as the reference lists them; one schema for all, stored in the storage version.
      versions: [...info.versions].reverse().map((name) => ({
        name,
        served: true,
        storage: name === info.version,
        subresources: { status: {} },
        additionalPrinterColumns: [...KIND_PRESENTATION[kind].columns.map((column) => ({ ...column })), { ...AGE_COLUMN }],
        schema: { openAPIV3Schema: openApiSchema(kind) },
      })),
    },
  };
}

/** One CustomResourceDefinition per policy kind, ordered by name; fresh objects on every call. */
export function buildCrdManifests(): CustomResourceDefinition[] {
  return KIND_NAMES.map(buildCrd).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

export const CRD_MANIFESTS_HEADER = [
  '# Custom resource definitions of the mesh policy API.',
  '# Generated from the zod schemas in crds/ by crds/crd-manifests.ts: do not edit by hand.',
  '# Regenerate after changing a schema:',
  '#   REFRESH_GOLDEN=1 node --experimental-vm-modules node_modules/jest/bin/jest.js crds/crd-manifests.test.ts',
].join('\n');

/** The manifests as one multi-document YAML stream, the content of `crds/generated/crds.yaml`. */
export function renderCrdManifests(): string {
  const documents = buildCrdManifests().map((crd) => `---\n${stringify(crd, { lineWidth: 0 })}`);
  return `${CRD_MANIFESTS_HEADER}\n${documents.join('')}`;
}
