{{/* The gateway's name: .Values.name, or the release name. */}}
{{- define "gateway.name" -}}
{{- .Values.name | default .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{- define "gateway.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (include "gateway.name" .) -}}
{{- end }}

{{/* The installer labels every object carries. */}}
{{- define "gateway.labels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mesh
app.kubernetes.io/name: {{ include "gateway.name" . }}
install.operator.mesh.io/owning-resource: {{ .Values.ownerName | default "unknown" }}
operator.mesh.io/component: {{ .Values.component }}
mesh.io/rev: {{ .Values.revision | default "default" }}
release: {{ .Release.Name }}
{{- end }}
