{{/* The installer's labels but the revision. */}}
{{- define "base.installerLabels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mesh
install.operator.mesh.io/owning-resource: {{ .Values.ownerName | default "unknown" | quote }}
operator.mesh.io/component: Base
release: {{ .Release.Name | quote }}
{{- end -}}

{{/* The installer's labels, on every object of the release. */}}
{{- define "base.labels" -}}
{{ include "base.installerLabels" . }}
mesh.io/rev: {{ .Values.revision | default "default" | quote }}
{{- end -}}

{{/* The daemon's service of a revision: meshd for default, meshd-<revision> otherwise. */}}
{{- define "base.daemonService" -}}
{{- if or (eq .Values.defaultRevision "default") (eq .Values.defaultRevision "") -}}
meshd
{{- else -}}
meshd-{{ .Values.defaultRevision }}
{{- end -}}
{{- end -}}
