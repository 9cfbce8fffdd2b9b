import { z } from 'zod';

const dnsLabel = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
  .max(63);

/**
 * The values of the `operator` chart (`deploy/charts/operator`): the install operator's namespace,
 * ServiceAccount, ClusterRole and binding, Deployment and metrics Service, and the install API's
 * CRD. `meshctl operator dump|init` fills them from `--hub`, `--tag`, `--imagePullSecrets`,
 * `--operatorNamespace`, `--watchedNamespaces` and `--revision`. The one source of the chart's
 * `values.schema.json`.
 */
export const operatorValuesSchema = z.strictObject({
  hub: z.string().default('unknown').describe('The image registry; "unknown" means docker.io/meshproject, the meshd chart\'s default.'),
  tag: z.union([z.string(), z.number()]).default('unknown').describe('The image tag; "unknown" means latest, the meshd chart\'s default.'),
  imagePullSecrets: z.array(z.string()).default([]).describe('Secrets for pulling the operator image.'),
  operatorNamespace: dnsLabel.default('mesh-operator').describe('The namespace the operator runs in (created by the chart).'),
  watchedNamespaces: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(,[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'namespaces, comma separated')
    .default('mesh-system')
    .describe('The namespaces whose MeshOperator resources the operator reconciles, comma separated.'),
  revision: z
    .union([z.literal(''), dnsLabel])
    .default('')
    .describe('The revision of the operator: its objects are named mesh-operator-<revision> and it reconciles only MeshOperators of that revision.'),
  manifestsDir: z.string().default('/usr/lib/mesh/deploy').describe('Where the image holds the charts and profiles the operator renders.'),
  monitoringPort: z.number().int().min(1).max(65535).default(8383).describe("The port of the operator's metrics (/metrics)."),
});

export type OperatorValues = z.infer<typeof operatorValuesSchema>;
