{{/*
Standard labels; they win over user labels of the same key. Labels and annotations are rendered
as JSON (a YAML flow mapping), never with toYaml: go-yaml writes U+2028/U+2029 raw inside quoted
scalars and reads them back as line breaks folded to spaces, so the API server would store
another string than the one sent. JSON escapes them (\u2028), quotes every string and never folds.
*/}}
{{- define "agent.labels" -}}
{{- $standard := dict
  "app.kubernetes.io/name" .Chart.Name
  "app.kubernetes.io/instance" .Release.Name
  "app.kubernetes.io/version" .Chart.AppVersion
  "app.kubernetes.io/managed-by" .Release.Service
  "helm.sh/chart" (printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_")
-}}
{{- toRawJson (merge $standard (.Values.labels | default dict)) -}}
{{- end -}}

{{- define "agent.annotations" -}}
{{- $annotations := deepCopy (.Values.annotations | default dict) -}}
{{- with .Values.displayName -}}
{{- $_ := set $annotations "agent-manager.giantswarm.io/display-name" . -}}
{{- end -}}
{{- if $annotations -}}
{{- toRawJson $annotations -}}
{{- end -}}
{{- end -}}

{{/*
The toolset checks the schema cannot word: an empty list and the inline cap.
Returns "" for a null toolset.
*/}}
{{- define "agent.toolsetMaxSelectors" -}}32{{- end -}}

{{- define "agent.validateToolset" -}}
{{- $toolset := .Values.toolset -}}
{{- if not (kindIs "invalid" $toolset) -}}
{{- $max := include "agent.toolsetMaxSelectors" . | int -}}
{{- if eq (len $toolset) 0 -}}
{{- fail "toolset must not be empty: use [\"preset:none\"] for a chat-only agent, or list the selectors the agent needs (e.g. [\"preset:read-only\"])" -}}
{{- end -}}
{{- if gt (len $toolset) $max -}}
{{- fail (printf "toolset has %d selectors, more than the %d allowed inline: a larger selection is a preset: define one in Muster's toolsetPresets and select it with preset:<name>" (len $toolset) $max) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* True ("true") when the toolset is exactly ["preset:none"]: a chat-only agent. */}}
{{- define "agent.chatOnly" -}}
{{- $toolset := .Values.toolset -}}
{{- if and (not (kindIs "invalid" $toolset)) (eq (len $toolset) 1) (eq (toString (first $toolset)) "preset:none") -}}
true
{{- end -}}
{{- end -}}
