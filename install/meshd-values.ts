import { z } from 'zod';
import { meshConfigInputSchema } from '../crds/index.js';

const quantity = z.union([z.string(), z.number()]);
const resources = z.strictObject({
  requests: z.record(z.string(), quantity).optional(),
  limits: z.record(z.string(), quantity).optional(),
});
const labelSelector = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z
    .array(z.strictObject({ key: z.string(), operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']), values: z.array(z.string()).optional() }))
    .optional(),
});
const revisionName = z.string().regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/, 'a revision is a DNS label: lowercase letters, digits and -');
const percentOrCount = z.union([z.string().regex(/^\d+%$/), z.number().int().min(0)]);

/** The values every chart of the mesh shares (`global`). */
export const globalValuesSchema = z.strictObject({
  hub: z.string().optional(),
  tag: z.union([z.string(), z.number()]).optional(),
  imagePullPolicy: z.enum(['', 'Always', 'IfNotPresent', 'Never']).optional(),
  imagePullSecrets: z.array(z.string()).optional(),
  meshNamespace: z.string().optional(),
  caAddress: z.string().optional(),
  meshID: z.string().optional(),
  network: z.string().optional(),
  multiCluster: z.strictObject({ clusterName: z.string().optional() }).optional(),
  jwtPolicy: z.enum(['third-party-jwt', 'first-party-jwt']).optional(),
  pilotCertProvider: z.string().optional(),
  logAsJson: z.boolean().optional(),
  logging: z.strictObject({ level: z.string().optional() }).optional(),
  sds: z.strictObject({ token: z.strictObject({ aud: z.string().optional() }).optional() }).optional(),
  sts: z.strictObject({ servicePort: z.number().int().min(0).max(65535).optional() }).optional(),
  configValidation: z.boolean().optional(),
  omitSidecarInjectorConfigMap: z.boolean().optional(),
  operatorManageWebhooks: z.boolean().optional(),
  proxy: z
    .strictObject({
      image: z.string().optional(),
      autoInject: z.enum(['enabled', 'disabled']).optional(),
      clusterDomain: z.string().optional(),
      logLevel: z.enum(['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off']).optional(),
      componentLogLevel: z.string().optional(),
      privileged: z.boolean().optional(),
      enableCoreDump: z.boolean().optional(),
      capNetBindService: z.boolean().optional(),
      holdApplicationUntilProxyStarts: z.boolean().optional(),
      includeIPRanges: z.string().optional(),
      excludeIPRanges: z.string().optional(),
      includeInboundPorts: z.string().optional(),
      excludeInboundPorts: z.string().optional(),
      includeOutboundPorts: z.string().optional(),
      excludeOutboundPorts: z.string().optional(),
      readinessInitialDelaySeconds: z.number().int().min(0).optional(),
      readinessPeriodSeconds: z.number().int().min(1).optional(),
      readinessFailureThreshold: z.number().int().min(1).optional(),
      lifecycle: z.record(z.string(), z.unknown()).optional(),
      resources: resources.optional(),
    })
    .optional(),
  proxy_init: z.strictObject({ image: z.string().optional() }).optional(),
});

/**
 * The values of the `meshd` chart (deploy/charts/meshd): the daemon's Deployment, Service, mesh
 * and injector ConfigMaps, webhook configurations, autoscaler and disruption budget. The one
 * source of the chart's `values.schema.json`.
 */
export const meshdValuesSchema = z.strictObject({
  revision: revisionName.optional(),
  revisionTags: z.array(revisionName).optional(),
  ownerName: z.string().optional(),
  pilot: z
    .strictObject({
      hub: z.string().optional(),
      tag: z.union([z.string(), z.number()]).optional(),
      image: z.string().optional(),
      replicaCount: z.number().int().min(0).optional(),
      autoscaleEnabled: z.boolean().optional(),
      autoscaleMin: z.number().int().min(1).optional(),
      autoscaleMax: z.number().int().min(1).optional(),
      cpu: z.strictObject({ targetAverageUtilization: z.number().int().min(1).max(100).optional() }).optional(),
      rollingMaxSurge: percentOrCount.optional(),
      rollingMaxUnavailable: percentOrCount.optional(),
      resources: resources.optional(),
      env: z.record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name'), z.union([z.string(), z.number(), z.boolean()])).optional(),
      nodeSelector: z.record(z.string(), z.string()).optional(),
      tolerations: z.array(z.record(z.string(), z.unknown())).optional(),
      affinity: z.record(z.string(), z.unknown()).optional(),
      podAnnotations: z.record(z.string(), z.string()).optional(),
      podLabels: z.record(z.string(), z.string()).optional(),
      keepaliveMaxServerConnectionAge: z.string().optional(),
      podDisruptionBudget: z.strictObject({ enabled: z.boolean().optional(), minAvailable: percentOrCount.optional() }).optional(),
    })
    .optional(),
  meshConfig: z.optional(meshConfigInputSchema),
  sidecarInjectorWebhook: z
    .strictObject({
      neverInjectSelector: z.array(labelSelector).optional(),
      alwaysInjectSelector: z.array(labelSelector).optional(),
      injectedAnnotations: z.record(z.string(), z.string()).optional(),
      enableNamespacesByDefault: z.boolean().optional(),
      objectSelector: z.strictObject({ enabled: z.boolean().optional(), autoInject: z.boolean().optional() }).optional(),
      rewriteAppHTTPProbe: z.boolean().optional(),
      templates: z.record(z.string(), z.string()).optional(),
      defaultTemplates: z.array(z.string()).optional(),
    })
    .optional(),
  meshdRemote: z.strictObject({ injectionURL: z.string().optional(), injectionPath: z.string().optional() }).optional(),
  mesh_cni: z.strictObject({ enabled: z.boolean().optional() }).optional(),
  global: globalValuesSchema.optional(),
});

export type MeshdValues = z.infer<typeof meshdValuesSchema>;
