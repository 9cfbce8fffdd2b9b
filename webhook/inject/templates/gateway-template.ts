/**
 * The `gateway` injection template, for gateway Deployments (`inject.mesh.io/templates: gateway`,
 * a `mesh-proxy` container with `image: auto`): the proxy runs as a router, with no capture init
 * container. A standalone Handlebars text (the Helm chart ships a copy).
 */
export const GATEWAY_TEMPLATE = `metadata:
  labels:
    service.mesh.io/canonical-name: {{toJson (coalesce (lookup objectMeta.labels "service.mesh.io/canonical-name") (lookup objectMeta.labels "app.kubernetes.io/name") (lookup objectMeta.labels "app") deploymentMeta.name)}}
    service.mesh.io/canonical-revision: {{toJson (coalesce (lookup objectMeta.labels "service.mesh.io/canonical-revision") (lookup objectMeta.labels "app.kubernetes.io/version") (lookup objectMeta.labels "version") "latest")}}
    mesh.io/rev: {{toJson (coalesce (lookup objectMeta.labels "mesh.io/rev") revision "default")}}
spec:
  containers:
  - name: mesh-proxy
    image: {{toJson proxyImage}}
    ports:
    - containerPort: 15090
      protocol: TCP
      name: http-envoy-prom
    args:
    - proxy
    - router
    - "--domain"
    - {{toJson (concat "$(POD_NAMESPACE).svc." (coalesce values.global.proxy.clusterDomain "cluster.local"))}}
    - {{toJson (concat "--proxyLogLevel=" (annotation objectMeta "sidecar.mesh.io/logLevel" values.global.proxy.logLevel))}}
    - {{toJson (concat "--proxyComponentLogLevel=" (annotation objectMeta "sidecar.mesh.io/componentLogLevel" values.global.proxy.componentLogLevel))}}
    - {{toJson (concat "--log_output_level=" (annotation objectMeta "sidecar.mesh.io/agentLogLevel" values.global.logging.level))}}
{{#if values.global.logAsJson}}
    - "--log_as_json"
{{/if}}
    env:
{{#if rewriteProbeLegacyLocalhost}}
    - name: REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION
      value: "true"
{{/if}}
    - name: JWT_POLICY
      value: {{toJson values.global.jwtPolicy}}
    - name: PILOT_CERT_PROVIDER
      value: {{toJson values.global.pilotCertProvider}}
    - name: CA_ADDR
{{#if values.global.caAddress}}
      value: {{toJson values.global.caAddress}}
{{else}}
      value: "meshd{{#if (and revision (ne revision "default"))}}-{{revision}}{{/if}}.{{values.global.meshNamespace}}.svc:15012"
{{/if}}
    - name: POD_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    - name: POD_NAMESPACE
      valueFrom:
        fieldRef:
          fieldPath: metadata.namespace
    - name: INSTANCE_IP
      valueFrom:
        fieldRef:
          fieldPath: status.podIP
    - name: SERVICE_ACCOUNT
      valueFrom:
        fieldRef:
          fieldPath: spec.serviceAccountName
    - name: HOST_IP
      valueFrom:
        fieldRef:
          fieldPath: status.hostIP
    - name: PROXY_CONFIG
      value: {{toJson (toJson proxyConfig)}}
    - name: MESH_META_POD_PORTS
      value: {{toJson (podPortsJson spec.containers)}}
    - name: MESH_META_APP_CONTAINERS
      value: {{toJson (join (appContainers spec.containers) ",")}}
    - name: MESH_META_CLUSTER_ID
      value: {{toJson (valueOrDefault values.global.multiCluster.clusterName "Kubernetes")}}
    - name: MESH_META_INTERCEPTION_MODE
      value: {{toJson (annotation objectMeta "sidecar.mesh.io/interceptionMode" (coalesce proxyConfig.interceptionMode "REDIRECT"))}}
{{#if values.global.network}}
    - name: MESH_META_NETWORK
      value: {{toJson values.global.network}}
{{/if}}
    - name: MESH_META_WORKLOAD_NAME
      value: {{toJson deploymentMeta.name}}
    - name: MESH_META_OWNER
      value: {{toJson (concat "kubernetes://apis/" typeMeta.apiVersion "/namespaces/" (valueOrDefault deploymentMeta.namespace "default") "/" (toLower typeMeta.kind) "s/" deploymentMeta.name)}}
{{#if (isset objectMeta.annotations "sidecar.mesh.io/bootstrapOverride")}}
    - name: MESH_BOOTSTRAP_OVERRIDE
      value: "/etc/mesh/custom-bootstrap/custom_bootstrap.json"
{{/if}}
    - name: MESH_META_MESH_ID
      value: {{toJson (valueOrDefault values.global.meshID meshConfig.trustDomain)}}
    - name: TRUST_DOMAIN
      value: {{toJson meshConfig.trustDomain}}
{{#each proxyConfig.proxyMetadata}}
    - name: {{toJson @key}}
      value: {{toJson this}}
{{/each}}
    readinessProbe:
      httpGet:
        path: /healthz/ready
        port: {{annotation objectMeta "status.sidecar.mesh.io/port" proxyConfig.statusPort}}
      initialDelaySeconds: {{annotation objectMeta "readiness.status.sidecar.mesh.io/initialDelaySeconds" values.global.proxy.readinessInitialDelaySeconds}}
      periodSeconds: {{annotation objectMeta "readiness.status.sidecar.mesh.io/periodSeconds" values.global.proxy.readinessPeriodSeconds}}
      timeoutSeconds: 3
      failureThreshold: {{annotation objectMeta "readiness.status.sidecar.mesh.io/failureThreshold" values.global.proxy.readinessFailureThreshold}}
    resources: {{toJson (proxyResources objectMeta values.global.proxy.resources)}}
    volumeMounts:
{{#if (eq values.global.pilotCertProvider "meshd")}}
    - mountPath: /var/run/secrets/mesh
      name: meshd-ca-cert
{{/if}}
    - mountPath: /var/lib/mesh/data
      name: mesh-data
{{#if (isset objectMeta.annotations "sidecar.mesh.io/bootstrapOverride")}}
    - mountPath: /etc/mesh/custom-bootstrap
      name: custom-bootstrap-volume
{{/if}}
    - mountPath: /etc/mesh/proxy
      name: mesh-envoy
{{#if (eq values.global.jwtPolicy "third-party-jwt")}}
    - mountPath: /var/run/secrets/tokens
      name: mesh-token
{{/if}}
    - mountPath: /etc/mesh/pod
      name: mesh-podinfo
  volumes:
{{#if (isset objectMeta.annotations "sidecar.mesh.io/bootstrapOverride")}}
  - name: custom-bootstrap-volume
    configMap:
      name: {{toJson (annotation objectMeta "sidecar.mesh.io/bootstrapOverride" "")}}
{{/if}}
  - emptyDir:
      medium: Memory
    name: mesh-envoy
  - name: mesh-data
    emptyDir: {}
  - name: mesh-podinfo
    downwardAPI:
      items:
      - path: "labels"
        fieldRef:
          fieldPath: metadata.labels
      - path: "annotations"
        fieldRef:
          fieldPath: metadata.annotations
{{#if (eq values.global.jwtPolicy "third-party-jwt")}}
  - name: mesh-token
    projected:
      sources:
      - serviceAccountToken:
          path: mesh-token
          expirationSeconds: 43200
          audience: {{toJson values.global.sds.token.aud}}
{{/if}}
{{#if (eq values.global.pilotCertProvider "meshd")}}
  - name: meshd-ca-cert
    configMap:
      name: mesh-ca-root-cert
{{/if}}
`;
