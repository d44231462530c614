{{- define "agent-manager.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agent-manager.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "agent-manager.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "agent-manager.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "agent-manager.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "agent-manager.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "agent-manager.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agent-manager.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "agent-manager.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "agent-manager.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Authentication is on when OIDC or API tokens are configured (as the service decides). */}}
{{- define "agent-manager.authEnabled" -}}
{{- if or .Values.auth.oidc.issuerUrl .Values.auth.apiTokens.existingSecret }}true{{ end }}
{{- end }}

{{/* Whether writes impersonate the caller: auth.kubeImpersonate, else on with authentication. */}}
{{- define "agent-manager.impersonate" -}}
{{- if kindIs "bool" .Values.auth.kubeImpersonate }}{{ if .Values.auth.kubeImpersonate }}true{{ end }}
{{- else }}{{ include "agent-manager.authEnabled" . }}{{ end }}
{{- end }}

{{- define "agent-manager.policyConfigMap" -}}
{{- if .Values.auth.policy.existingConfigMap }}{{ .Values.auth.policy.existingConfigMap }}
{{- else if .Values.auth.policy.inline }}{{ include "agent-manager.fullname" . }}-policy{{ end }}
{{- end }}

{{/* ALLOWED_HOSTS, the Host/Origin names REST, /docs and /mcp accept: the Service's DNS names, loopback, the public host, allowedHosts (and mcp.allowedHosts, its old key). */}}
{{- define "agent-manager.allowedHosts" -}}
{{- $name := include "agent-manager.fullname" . }}
{{- $hosts := list $name (printf "%s.%s" $name .Release.Namespace) (printf "%s.%s.svc" $name .Release.Namespace) (printf "%s.%s.svc.cluster.local" $name .Release.Namespace) "localhost" "127.0.0.1" }}
{{- if .Values.auth.publicUrl }}{{ $hosts = append $hosts (urlParse .Values.auth.publicUrl).hostname }}{{ end }}
{{- concat $hosts .Values.allowedHosts .Values.mcp.allowedHosts | uniq | join "," }}
{{- end }}

{{/* The PersistentVolumeClaim the SQLite store lives on: the one named, the chart's own, or none
     (PostgreSQL, or an emptyDir asked for). */}}
{{- define "agent-manager.sqliteClaim" -}}
{{- if and (not .Values.database.existingSecret) (eq .Values.database.sqlite.volume "persistentVolumeClaim") }}
{{- .Values.database.sqlite.existingClaim | default (printf "%s-data" (include "agent-manager.fullname" .)) }}
{{- end }}
{{- end }}

{{/* Current API versions: those the cluster serves, or, rendered without a cluster (helm template,
     where .Capabilities.KubeVersion is helm's own), those of the Kubernetes version. */}}
{{- define "agent-manager.pdbApiVersion" -}}
{{- if or (.Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget") (semverCompare ">=1.21-0" .Capabilities.KubeVersion.Version) }}policy/v1{{ else }}policy/v1beta1{{ end }}
{{- end }}

{{- define "agent-manager.hpaApiVersion" -}}
{{- if or (.Capabilities.APIVersions.Has "autoscaling/v2/HorizontalPodAutoscaler") (semverCompare ">=1.23-0" .Capabilities.KubeVersion.Version) }}autoscaling/v2{{ else }}autoscaling/v2beta2{{ end }}
{{- end }}

{{- define "agent-manager.terminationGracePeriodSeconds" -}}
{{- add .Values.config.shutdownTimeoutSeconds .Values.preStopSleepSeconds 15 }}
{{- end }}

{{/* Refusals at render time: what the service would refuse at start, said before anything is
     installed, all in one message. */}}
{{- define "agent-manager.checks" -}}
{{- $problems := list }}
{{- if and (not .Values.database.existingSecret) (or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled) }}
{{- $problems = append $problems "database.existingSecret: more than one replica (replicaCount > 1 or autoscaling) needs PostgreSQL: create a Secret holding DATABASE_URL=postgresql://… and name it here, or leave replicaCount=1 for a single replica on SQLite" }}
{{- end }}
{{- if and (not (include "agent-manager.authEnabled" .)) (not .Values.auth.disabled) }}
{{- $problems = append $problems "auth: authentication is off (neither auth.oidc.issuerUrl nor auth.apiTokens.existingSecret is set), so every caller would be admin: configure one (auth.oidc.issuerUrl with auth.oidc.audience, or auth.apiTokens.existingSecret), or set auth.disabled=true to serve without authentication on purpose" }}
{{- end }}
{{- if and .Values.auth.oidc.issuerUrl (not .Values.auth.oidc.audience) }}
{{- $problems = append $problems "auth.oidc.audience: required with auth.oidc.issuerUrl: the audience (aud) the identity provider puts in tokens for this service, e.g. agent-manager" }}
{{- end }}
{{- if and .Values.auth.policy.existingConfigMap .Values.auth.policy.inline }}
{{- $problems = append $problems "auth.policy: set existingConfigMap or inline, not both" }}
{{- end }}
{{- if eq (int (default 0 .Values.metrics.port)) 8080 }}
{{- $problems = append $problems "metrics.port: 8080 is the service's own port (PORT); choose another port, or leave it null to serve /metrics on 8080" }}
{{- end }}
{{- if and (eq (toString .Values.auth.kubeImpersonate) "true") (not (include "agent-manager.authEnabled" .)) }}
{{- $problems = append $problems "auth.kubeImpersonate: impersonation needs authenticated callers; configure auth.oidc.issuerUrl or auth.apiTokens.existingSecret, or leave kubeImpersonate null" }}
{{- end }}
{{- if $problems }}
{{- fail (printf "\n%s" (join "\n" $problems)) }}
{{- end }}
{{- end }}
