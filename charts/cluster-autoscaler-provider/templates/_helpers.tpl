{{/* The object name: the release name if it already says what it is. */}}
{{- define "cap.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Pod selector labels. */}}
{{- define "cap.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "cap.labels" -}}
{{ include "cap.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The provider, checked: the templates below know these three. */}}
{{- define "cap.provider" -}}
{{- $p := required "provider is required: vultr, volcengine or exoscale" .Values.provider -}}
{{- if not (has $p (list "vultr" "volcengine" "exoscale")) -}}
{{- fail (printf "provider %q: want vultr, volcengine or exoscale" $p) -}}
{{- end -}}
{{- $p -}}
{{- end -}}

{{/* The provider's configuration ConfigMap, named like the kustomize
examples'. Without a provider only helm lint gets this far (it treats
required and fail as warnings), so it still gets a valid name. */}}
{{- define "cap.configName" -}}
{{- $p := include "cap.provider" . -}}
{{- if $p -}}
{{- printf "%s-provider-config" $p -}}
{{- else -}}
{{- printf "%s-config" (include "cap.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The Secret with the cloud credentials: by default the in-tree
provider's Secret, which generate-secret.sh makes. */}}
{{- define "cap.credentialsSecret" -}}
{{- $p := include "cap.provider" . -}}
{{- $default := get (dict "vultr" "cluster-autoscaler-cloud-config" "volcengine" "cloud-config" "exoscale" "exoscale-api-credentials") $p -}}
{{- default $default .Values.credentialsSecret -}}
{{- end -}}

{{/* The Secret with the provider's server certificate. */}}
{{- define "cap.serverSecret" -}}
{{- printf "%s-tls" (include "cap.fullname" .) -}}
{{- end -}}
