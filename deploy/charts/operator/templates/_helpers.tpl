{{/* mesh-operator, or mesh-operator-<revision>. */}}
{{- define "operator.name" -}}
{{- if .Values.revision -}}mesh-operator-{{ .Values.revision }}{{- else -}}mesh-operator{{- end -}}
{{- end -}}

{{/* The image: "unknown" hub and tag stand for the charts' defaults, as the meshd chart's global.hub and global.tag. */}}
{{- define "operator.image" -}}
{{- $hub := ternary "docker.io/meshproject" .Values.hub (eq .Values.hub "unknown") -}}
{{- $tag := ternary "latest" (toString .Values.tag) (eq (toString .Values.tag) "unknown") -}}
{{ $hub }}/operator:{{ $tag }}
{{- end -}}

{{/* The installer's labels, on every object of the release. */}}
{{- define "operator.labels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mesh
app.kubernetes.io/name: mesh-operator
operator.mesh.io/component: Operator
release: {{ .Release.Name | quote }}
{{- end -}}
