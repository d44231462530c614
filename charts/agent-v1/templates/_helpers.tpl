{{/*
Standard labels; they win over user labels of the same key. Labels and annotations are rendered
as JSON (a YAML flow mapping), never with toYaml: go-yaml writes U+2028/U+2029 raw inside quoted
scalars and reads them back as line breaks folded to spaces, so the API server would store
another string than the one sent. JSON escapes them (\u2028), quotes every string and never folds.
The argument is a list: the root context and the object's app.kubernetes.io/component.
*/}}
{{- define "agent.labels" -}}
{{- $root := index . 0 -}}
{{- $standard := dict
  "app.kubernetes.io/name" $root.Chart.Name
  "app.kubernetes.io/instance" $root.Release.Name
  "app.kubernetes.io/version" $root.Chart.AppVersion
  "app.kubernetes.io/managed-by" $root.Release.Service
  "app.kubernetes.io/component" (index . 1)
  "helm.sh/chart" (printf "%s-%s" $root.Chart.Name $root.Chart.Version | replace "+" "_")
-}}
{{- toRawJson (merge $standard ($root.Values.labels | default dict)) -}}
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
Object names. The AgentTemplate is named like the agent (the 0.x chart's Agent has the same name,
another kind: both live side by side during a 0.x → 1.x move). The RemoteMCPServer is the agent's
own, <name>-muster: never the shared gateway server ("muster") that 0.x Agents bind.
*/}}
{{- define "agent.name" -}}
{{- .Values.name | default .Release.Name -}}
{{- end -}}

{{- define "agent.musterServerName" -}}
{{- printf "%s-muster" (include "agent.name" .) -}}
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

{{/* True ("true") when the agent binds Muster: enabled and not chat-only. */}}
{{- define "agent.bindsMuster" -}}
{{- $muster := .Values.muster | default dict -}}
{{- if and $muster.enabled (not (include "agent.chatOnly" .)) -}}
true
{{- end -}}
{{- end -}}

{{/*
The RemoteMCPServer's checks: a URL to reach Muster at, and no header of the user's named
X-Muster-Toolset (HTTP header names are case-insensitive), which would fight the toolset's.
*/}}
{{- define "agent.validateMuster" -}}
{{- if include "agent.bindsMuster" . -}}
{{- $muster := .Values.muster -}}
{{- if not $muster.url -}}
{{- fail "muster.url is required when the agent binds Muster: set it to Muster's MCP endpoint as the agent's pod reaches it (the spec.url of the shared RemoteMCPServer 0.x agents bind), or use toolset [\"preset:none\"] for a chat-only agent" -}}
{{- end -}}
{{- range $i, $header := $muster.headersFrom | default list -}}
{{- if eq (lower (toString $header.name)) "x-muster-toolset" -}}
{{- fail (printf "muster.headersFrom[%d] sets X-Muster-Toolset, which the chart sends from the toolset value: declare the toolset instead (e.g. toolset: [\"preset:read-only\"])" $i) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
