{{- define "bench.labels" -}}
app.kubernetes.io/name: bench
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ printf "c%04d" .group }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}
{{- define "bench.selector" -}}
app.kubernetes.io/name: bench
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ printf "c%04d" .group }}
{{- end -}}
