{{/* The revision suffix of every name: "" for the default revision, -<revision> otherwise. */}}
{{- define "meshd.suffix" -}}
{{- if and .Values.revision (ne .Values.revision "default") }}-{{ .Values.revision }}{{ end -}}
{{- end }}

{{/* The mesh.io/rev label value. */}}
{{- define "meshd.rev" -}}
{{- .Values.revision | default "default" -}}
{{- end }}

{{/* meshd, or meshd-<revision>: the Deployment, Service and ServiceAccount. */}}
{{- define "meshd.name" -}}
meshd{{ include "meshd.suffix" . }}
{{- end }}

{{/* The installer labels every object carries, so that uninstall, prune and verify can select by label. */}}
{{- define "meshd.labels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mesh
install.operator.mesh.io/owning-resource: {{ .Values.ownerName | default "unknown" }}
operator.mesh.io/component: Pilot
mesh.io/rev: {{ include "meshd.rev" . }}
release: {{ .Release.Name }}
{{- end }}

{{/*
The caBundle (and failurePolicy) the daemon has patched into a webhook configuration already in
the cluster, by webhook name: an upgrade applies them back unchanged, so Helm never takes those
fields from the daemon (with server-side apply that would be a conflict) nor resets them.
*/}}
{{- define "meshd.patchedFields" -}}
{{- $fields := dict }}
{{- $existing := lookup "admissionregistration.k8s.io/v1" .kind "" .name }}
{{- range ($existing.webhooks | default list) }}
{{- $_ := set $fields .name (dict "caBundle" (.clientConfig.caBundle | default "") "failurePolicy" (.failurePolicy | default "")) }}
{{- end }}
{{- toJson $fields }}
{{- end }}

{{/* Where the webhooks are called: the meshd service, or meshdRemote.injectionURL. */}}
{{- define "meshd.injectionClientConfig" -}}
{{- if .Values.meshdRemote.injectionURL -}}
url: {{ .Values.meshdRemote.injectionURL }}
{{- else -}}
service:
  name: {{ include "meshd.name" . }}
  namespace: {{ .Release.Namespace }}
  path: {{ .Values.meshdRemote.injectionPath | quote }}
  port: 443
{{- end }}
{{- end }}

{{/* One injection webhook: (dict "root" $ "name" … "namespaceSelector" … "objectSelector" …). */}}
{{- define "meshd.injectionWebhook" }}
  - name: {{ .name }}
    clientConfig:
      {{- include "meshd.injectionClientConfig" .root | nindent 6 }}
      caBundle: {{ (get (.patched | default dict) .name | default dict).caBundle | default "" | quote }}
    sideEffects: None
    rules:
      - operations: [CREATE]
        apiGroups: [""]
        apiVersions: [v1]
        resources: [pods]
    failurePolicy: Fail
    admissionReviewVersions: [v1beta1, v1]
    namespaceSelector:
      {{- toYaml .namespaceSelector | nindent 6 }}
    {{- if .objectSelector }}
    objectSelector:
      {{- toYaml .objectSelector | nindent 6 }}
    {{- end }}
{{- end }}
