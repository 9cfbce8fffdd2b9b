import { z } from 'zod';

const quantity = z.union([z.string(), z.number()]);
const resources = z.strictObject({ requests: z.record(z.string(), quantity).optional(), limits: z.record(z.string(), quantity).optional() });
const servicePort = z.strictObject({
  name: z.string(),
  port: z.number().int().min(1).max(65535),
  targetPort: z.union([z.number().int().min(1).max(65535), z.string()]).optional(),
  protocol: z.enum(['TCP', 'UDP', 'SCTP']).optional(),
  nodePort: z.number().int().min(1).max(65535).optional(),
});

/**
 * The values of the `gateway` chart (deploy/charts/gateway): a gateway Deployment whose proxy the
 * injection webhook fills in (template `gateway`, `image: auto`), its Service, autoscaler,
 * disruption budget, ServiceAccount and the Role that reads its TLS credentials. The one source of
 * the chart's `values.schema.json`.
 */
export const gatewayValuesSchema = z.strictObject({
  name: z
    .string()
    .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/, 'a DNS label')
    .optional(),
  revision: z
    .string()
    .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/, 'a DNS label')
    .optional(),
  ownerName: z.string().optional(),
  component: z.enum(['IngressGateways', 'EgressGateways']).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  podAnnotations: z.record(z.string(), z.string()).optional(),
  replicaCount: z.number().int().min(0).optional(),
  autoscaling: z
    .strictObject({
      enabled: z.boolean().optional(),
      minReplicas: z.number().int().min(1).optional(),
      maxReplicas: z.number().int().min(1).optional(),
      targetCPUUtilizationPercentage: z.number().int().min(1).max(100).optional(),
    })
    .optional(),
  podDisruptionBudget: z
    .strictObject({ enabled: z.boolean().optional(), minAvailable: z.union([z.number().int().min(0), z.string().regex(/^\d+%$/)]).optional() })
    .optional(),
  resources: resources.optional(),
  env: z.record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name'), z.string()).optional(),
  service: z
    .strictObject({
      type: z.enum(['ClusterIP', 'NodePort', 'LoadBalancer']).optional(),
      ports: z.array(servicePort).optional(),
      annotations: z.record(z.string(), z.string()).optional(),
      loadBalancerIP: z.string().optional(),
      externalTrafficPolicy: z.enum(['', 'Cluster', 'Local']).optional(),
    })
    .optional(),
  serviceAccount: z
    .strictObject({ create: z.boolean().optional(), name: z.string().optional(), annotations: z.record(z.string(), z.string()).optional() })
    .optional(),
  nodeSelector: z.record(z.string(), z.string()).optional(),
  tolerations: z.array(z.record(z.string(), z.unknown())).optional(),
  affinity: z.record(z.string(), z.unknown()).optional(),
  imagePullSecrets: z.array(z.string()).optional(),
});

export type GatewayValues = z.infer<typeof gatewayValuesSchema>;
