/**
 * The `sidecar` injection template: the capture init container, the `mesh-proxy` container, their
 * volumes and the pod's mesh labels. A standalone Handlebars text (the Helm chart ships a copy);
 * it renders a partial pod as YAML that is strategic-merged onto the pod.
 */
export const SIDECAR_TEMPLATE = `metadata:
  labels:
    security.mesh.io/tlsMode: {{toJson (coalesce (lookup objectMeta.labels "security.mesh.io/tlsMode") "mesh")}}
    service.mesh.io/canonical-name: {{toJson (coalesce (lookup objectMeta.labels "service.mesh.io/canonical-name") (lookup objectMeta.labels "app.kubernetes.io/name") (lookup objectMeta.labels "app") deploymentMeta.name)}}
    service.mesh.io/canonical-revision: {{toJson (coalesce (lookup objectMeta.labels "service.mesh.io/canonical-revision") (lookup objectMeta.labels "app.kubernetes.io/version") (lookup objectMeta.labels "version") "latest")}}
  annotations: {
{{#if (eq (len (appContainers spec.containers)) 1)}}
    kubectl.kubernetes.io/default-logs-container: {{toJson (first (appContainers spec.containers))}},
    kubectl.kubernetes.io/default-container: {{toJson (first (appContainers spec.containers))}},
{{/if}}
{{#if values.mesh_cni.enabled}}
    sidecar.mesh.io/interceptionMode: {{toJson (annotation objectMeta "sidecar.mesh.io/interceptionMode" (coalesce proxyConfig.interceptionMode "REDIRECT"))}},
    traffic.sidecar.mesh.io/includeOutboundIPRanges: {{toJson (annotation objectMeta "traffic.sidecar.mesh.io/includeOutboundIPRanges" values.global.proxy.includeIPRanges)}},
    traffic.sidecar.mesh.io/excludeOutboundIPRanges: {{toJson (annotation objectMeta "traffic.sidecar.mesh.io/excludeOutboundIPRanges" values.global.proxy.excludeIPRanges)}},
    traffic.sidecar.mesh.io/includeInboundPorts: {{toJson (annotation objectMeta "traffic.sidecar.mesh.io/includeInboundPorts" values.global.proxy.includeInboundPorts)}},
    traffic.sidecar.mesh.io/excludeInboundPorts: {{toJson (excludeInboundPort (annotation objectMeta "status.sidecar.mesh.io/port" proxyConfig.statusPort) (annotation objectMeta "traffic.sidecar.mesh.io/excludeInboundPorts" values.global.proxy.excludeInboundPorts))}},
{{/if}}
  }
spec:
{{#if (ne (annotation objectMeta "sidecar.mesh.io/interceptionMode" (coalesce proxyConfig.interceptionMode "REDIRECT")) "NONE")}}
  initContainers:
  - name: {{#if values.mesh_cni.enabled}}mesh-validation{{else}}mesh-init{{/if}}
    image: {{toJson proxyImage}}
{{#if values.global.imagePullPolicy}}
    imagePullPolicy: {{toJson values.global.imagePullPolicy}}
{{/if}}
    args:
    - mesh-iptables
    - "-p"
    - {{toJson (concat meshConfig.proxyListenPort)}}
    - "-z"
    - {{toJson (concat meshConfig.proxyInboundListenPort)}}
    - "-u"
    - "1337"
    - "-m"
    - {{toJson (annotation objectMeta "sidecar.mesh.io/interceptionMode" (coalesce proxyConfig.interceptionMode "REDIRECT"))}}
    - "-i"
    - {{toJson (annotation objectMeta "traffic.sidecar.mesh.io/includeOutboundIPRanges" values.global.proxy.includeIPRanges)}}
    - "-x"
    - {{toJson (annotation objectMeta "traffic.sidecar.mesh.io/excludeOutboundIPRanges" values.global.proxy.excludeIPRanges)}}
    - "-b"
    - {{toJson (annotation objectMeta "traffic.sidecar.mesh.io/includeInboundPorts" values.global.proxy.includeInboundPorts)}}
    - "-d"
    - {{toJson (excludeInboundPort (annotation objectMeta "status.sidecar.mesh.io/port" proxyConfig.statusPort) (joinPorts "15090,15021" (annotation objectMeta "traffic.sidecar.mesh.io/excludeInboundPorts" values.global.proxy.excludeInboundPorts)))}}
{{#if (or (isset objectMeta.annotations "traffic.sidecar.mesh.io/includeOutboundPorts") values.global.proxy.includeOutboundPorts)}}
    - "-q"
    - {{toJson (annotation objectMeta "traffic.sidecar.mesh.io/includeOutboundPorts" values.global.proxy.includeOutboundPorts)}}
{{/if}}
{{#if (or (isset objectMeta.annotations "traffic.sidecar.mesh.io/excludeOutboundPorts") values.global.proxy.excludeOutboundPorts)}}
    - "-o"
    - {{toJson (annotation objectMeta "traffic.sidecar.mesh.io/excludeOutboundPorts" values.global.proxy.excludeOutboundPorts)}}
{{/if}}
{{#if (isset objectMeta.annotations "traffic.sidecar.mesh.io/kubevirtInterfaces")}}
    - "-k"
    - {{toJson (annotation objectMeta "traffic.sidecar.mesh.io/kubevirtInterfaces" "")}}
{{/if}}
{{#if values.mesh_cni.enabled}}
    - "--run-validation"
    - "--skip-rule-apply"
{{/if}}
    env:
{{#each proxyConfig.proxyMetadata}}
    - name: {{toJson @key}}
      value: {{toJson this}}
{{/each}}
    resources: {{toJson (proxyResources objectMeta values.global.proxy.resources)}}
{{#if values.mesh_cni.enabled}}
    securityContext:
      allowPrivilegeEscalation: false
      capabilities:
        drop:
        - ALL
      privileged: false
      readOnlyRootFilesystem: true
      runAsGroup: 1337
      runAsNonRoot: true
      runAsUser: 1337
{{else}}
    securityContext:
      allowPrivilegeEscalation: {{toJson (coalesce values.global.proxy.privileged false)}}
      capabilities:
        add:
        - NET_ADMIN
        - NET_RAW
        drop:
        - ALL
      privileged: {{toJson (coalesce values.global.proxy.privileged false)}}
      readOnlyRootFilesystem: false
      runAsGroup: 0
      runAsNonRoot: false
      runAsUser: 0
{{/if}}
{{#if (eq (annotation objectMeta "sidecar.mesh.io/enableCoreDump" values.global.proxy.enableCoreDump) "true")}}
  - name: enable-core-dump
    image: {{toJson proxyImage}}
    command:
    - /bin/sh
    args:
    - "-c"
    - "sysctl -w kernel.core_pattern=/var/lib/mesh/data/core.proxy && ulimit -c unlimited"
    resources: {{toJson (proxyResources objectMeta values.global.proxy.resources)}}
    securityContext:
      allowPrivilegeEscalation: true
      capabilities:
        add:
        - SYS_ADMIN
        drop:
        - ALL
      privileged: true
      readOnlyRootFilesystem: false
      runAsGroup: 0
      runAsNonRoot: false
      runAsUser: 0
{{/if}}
{{/if}}
  containers:
  - name: mesh-proxy
    image: {{toJson proxyImage}}
    ports:
    - containerPort: 15090
      protocol: TCP
      name: http-envoy-prom
    args:
    - proxy
    - sidecar
    - "--domain"
    - {{toJson (concat "$(POD_NAMESPACE).svc." (coalesce values.global.proxy.clusterDomain "cluster.local"))}}
    - {{toJson (concat "--proxyLogLevel=" (annotation objectMeta "sidecar.mesh.io/logLevel" values.global.proxy.logLevel))}}
    - {{toJson (concat "--proxyComponentLogLevel=" (annotation objectMeta "sidecar.mesh.io/componentLogLevel" values.global.proxy.componentLogLevel))}}
    - {{toJson (concat "--log_output_level=" (annotation objectMeta "sidecar.mesh.io/agentLogLevel" values.global.logging.level))}}
{{#if values.global.sts.servicePort}}
    - {{toJson (concat "--stsPort=" values.global.sts.servicePort)}}
{{/if}}
{{#if values.global.logAsJson}}
    - "--log_as_json"
{{/if}}
    - "--concurrency"
    - {{toJson (concat estimatedConcurrency)}}
{{#if (len values.global.proxy.lifecycle)}}
    lifecycle: {{toJson values.global.proxy.lifecycle}}
{{else if (coalesce proxyConfig.holdApplicationUntilProxyStarts values.global.proxy.holdApplicationUntilProxyStarts)}}
    lifecycle:
      postStart:
        exec:
          command:
          - pilot-agent
          - wait
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
{{#if (and (isset objectMeta.annotations "status.sidecar.mesh.io/port") (ne (annotation objectMeta "status.sidecar.mesh.io/port" "") "0"))}}
    - name: PROXY_STATUS_PORT
      value: {{toJson (annotation objectMeta "status.sidecar.mesh.io/port" "")}}
{{/if}}
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
{{#if values.global.imagePullPolicy}}
    imagePullPolicy: {{toJson values.global.imagePullPolicy}}
{{/if}}
{{#if (ne (annotation objectMeta "status.sidecar.mesh.io/port" proxyConfig.statusPort) "0")}}
    readinessProbe:
      httpGet:
        path: /healthz/ready
        port: {{annotation objectMeta "status.sidecar.mesh.io/port" proxyConfig.statusPort}}
      initialDelaySeconds: {{annotation objectMeta "readiness.status.sidecar.mesh.io/initialDelaySeconds" values.global.proxy.readinessInitialDelaySeconds}}
      periodSeconds: {{annotation objectMeta "readiness.status.sidecar.mesh.io/periodSeconds" values.global.proxy.readinessPeriodSeconds}}
      timeoutSeconds: 3
      failureThreshold: {{annotation objectMeta "readiness.status.sidecar.mesh.io/failureThreshold" values.global.proxy.readinessFailureThreshold}}
{{/if}}
    securityContext:
      allowPrivilegeEscalation: {{toJson (coalesce values.global.proxy.privileged false)}}
      capabilities:
{{#if (or (eq (annotation objectMeta "sidecar.mesh.io/interceptionMode" (coalesce proxyConfig.interceptionMode "REDIRECT")) "TPROXY") (eq (annotation objectMeta "sidecar.mesh.io/capNetBindService" values.global.proxy.capNetBindService) "true"))}}
        add:
{{#if (eq (annotation objectMeta "sidecar.mesh.io/interceptionMode" (coalesce proxyConfig.interceptionMode "REDIRECT")) "TPROXY")}}
        - NET_ADMIN
{{/if}}
{{#if (eq (annotation objectMeta "sidecar.mesh.io/capNetBindService" values.global.proxy.capNetBindService) "true")}}
        - NET_BIND_SERVICE
{{/if}}
{{/if}}
        drop:
        - ALL
      privileged: {{toJson (coalesce values.global.proxy.privileged false)}}
      readOnlyRootFilesystem: {{toJson (ne (annotation objectMeta "sidecar.mesh.io/enableCoreDump" values.global.proxy.enableCoreDump) "true")}}
      runAsGroup: 1337
{{#if (or (eq (annotation objectMeta "sidecar.mesh.io/interceptionMode" (coalesce proxyConfig.interceptionMode "REDIRECT")) "TPROXY") (eq (annotation objectMeta "sidecar.mesh.io/capNetBindService" values.global.proxy.capNetBindService) "true"))}}
      runAsNonRoot: false
      runAsUser: 0
{{else}}
      runAsNonRoot: true
      runAsUser: 1337
{{/if}}
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
{{#each (fromJson (annotation objectMeta "sidecar.mesh.io/userVolumeMount" "{}"))}}
    - {{toJson (withName @key this)}}
{{/each}}
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
{{#each (fromJson (annotation objectMeta "sidecar.mesh.io/userVolume" "{}"))}}
  - {{toJson (withName @key this)}}
{{/each}}
{{#if values.global.imagePullSecrets}}
  imagePullSecrets:
{{#each values.global.imagePullSecrets}}
  - name: {{toJson this}}
{{/each}}
{{/if}}
`;
