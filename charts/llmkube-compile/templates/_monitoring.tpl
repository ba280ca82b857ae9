{{- define "llmkube.monitoringLabels" -}}
{{ include "llmkube.labels" . }}
{{- with .Values.monitoring.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The router-proxies the compiler deploys (targets/proxy labels them). */}}
{{- define "llmkube.routerProxySelector" -}}
matchLabels:
  app.kubernetes.io/component: router-proxy
  app.kubernetes.io/managed-by: llmkube-compile
{{- end -}}

{{- define "llmkube.routerNamespaceSelector" -}}
{{- if .Values.monitoring.routerNamespaces -}}
matchNames:
{{ toYaml .Values.monitoring.routerNamespaces }}
{{- else -}}
any: true
{{- end -}}
{{- end -}}
