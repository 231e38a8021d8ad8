{{/*
zoo-passwords.password returns the base64 value of key in the Secret secret: the value
given, else the one the Secret already holds in the cluster, else a new random one.
Usage: include "zoo-passwords.password" (dict "secret" "name" "key" "password" "given" .Values.x "length" 16 "context" $)
*/}}
{{- define "zoo-passwords.password" -}}
{{- $existing := lookup "v1" "Secret" .context.Release.Namespace .secret -}}
{{- if .given -}}
{{- .given | b64enc -}}
{{- else if and $existing (hasKey ($existing.data | default dict) .key) -}}
{{- index $existing.data .key -}}
{{- else -}}
{{- randAlphaNum (int .length) | b64enc -}}
{{- end -}}
{{- end -}}
