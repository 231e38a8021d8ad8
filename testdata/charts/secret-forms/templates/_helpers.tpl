{{- define "forms.config" -}}
database:
  url: postgres://{{ .Values.db.user }}:{{ .Values.db.password }}@{{ .Values.db.host }}/app
  token: {{ .Values.apiToken }}
{{- end -}}

{{/* Like bitnami's common.secrets.passwords.manage: the given value, base64-encoded. */}}
{{- define "forms.secrets.password" -}}
{{- if .value -}}{{ .value | toString | b64enc | quote }}{{- else -}}{{ randAlphaNum 10 | b64enc | quote }}{{- end -}}
{{- end -}}
