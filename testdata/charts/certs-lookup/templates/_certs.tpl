{{/*
certs-lookup.data returns the data of the certificate's Secret: what the cluster holds, else a
CA and a certificate for the release's service, generated now and written as text.
*/}}
{{- define "certs-lookup.data" -}}
{{- $certs := lookup "v1" "Secret" .Release.Namespace (printf "%s-certs" .Release.Name) -}}
{{- if $certs -}}
tls.crt: {{ index $certs.data "tls.crt" }}
tls.key: {{ index $certs.data "tls.key" }}
ca.crt: {{ index $certs.data "ca.crt" }}
{{- else -}}
{{- $service := printf "%s-master" .Release.Name -}}
{{- $ca := genCA (printf "%s-ca" .Release.Name) 365 -}}
{{- $cert := genSignedCert $service nil (list $service (printf "%s.%s.svc" $service .Release.Namespace)) 365 $ca -}}
tls.crt: {{ $cert.Cert | toString | b64enc }}
tls.key: {{ $cert.Key | toString | b64enc }}
ca.crt: {{ $ca.Cert | toString | b64enc }}
{{- end -}}
{{- end -}}
