{{- define "zoo-lib.labels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: zoo
environment: {{ .Values.global.environment }}
{{- end -}}

{{/* zoo-lib.configmap renders a ConfigMap: (dict "name" n "data" d "context" $) */}}
{{- define "zoo-lib.configmap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .name }}
  labels: {{- include "zoo-lib.labels" .context | nindent 4 }}
data: {{- toYaml .data | nindent 2 }}
{{- end -}}
