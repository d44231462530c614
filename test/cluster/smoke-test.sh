#!/usr/bin/env bash
# Smoke test for a running cluster (curl only): in a fresh namespace create an
# Agent and a RemoteMCPServer, patch the Agent through the /status subresource,
# read it back. With --restart-apiserver also stop the apiserver, check that a
# write fails, start it again and check that writes succeed and data survived.
# Usage: smoke-test.sh [--restart-apiserver] [STATE_DIR]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
RESTART=0
if [[ "${1:-}" == --restart-apiserver ]]; then RESTART=1; shift; fi
resolve_state_dir "${1:-}"
apiserver_ready || die "cluster in $STATE_DIR is not running"

API="$(api_url)"
NS="smoke-$(date +%s)-$RANDOM"
AG="$API/apis/kagent.dev/v1alpha2/namespaces/$NS/agents"
JSON=(-H 'Content-Type: application/json')
flat() { tr -d ' \n'; }
expect() { # expect DESC HAYSTACK NEEDLE
  if [[ "$2" == *"$3"* ]]; then log "ok: $1"; else log "FAIL: $1"; printf '%s\n' "$2" >&2; exit 1; fi
}

out="$(api_curl -X POST "${JSON[@]}" "$API/api/v1/namespaces" \
  -d "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$NS\"}}" | flat)"
expect "create namespace $NS" "$out" "\"name\":\"$NS\""

out="$(api_curl -X POST "${JSON[@]}" "$API/apis/kagent.dev/v1alpha2/namespaces/$NS/remotemcpservers" -d '{
  "apiVersion":"kagent.dev/v1alpha2","kind":"RemoteMCPServer","metadata":{"name":"logs"},
  "spec":{"description":"d","protocol":"STREAMABLE_HTTP","url":"http://mcp:8000/mcp","timeout":"30s",
    "headersFrom":[{"name":"Authorization","valueFrom":{"type":"Secret","name":"s","key":"token"}}]}}' | flat)"
expect "create RemoteMCPServer" "$out" '"url":"http://mcp:8000/mcp"'

out="$(api_curl -X POST "${JSON[@]}" "$AG" -d '{
  "apiVersion":"kagent.dev/v1alpha2","kind":"Agent","metadata":{"name":"a1"},
  "spec":{"type":"Declarative","description":"smoke","declarative":{"systemMessage":"hi","modelConfig":"m","stream":true,
    "tools":[{"type":"McpServer","mcpServer":{"kind":"RemoteMCPServer","apiGroup":"kagent.dev","name":"logs","toolNames":["a","b"]},
      "headersFrom":[{"name":"X-Id","value":"1"}]}]}},
  "status":{"conditions":[{"type":"Ignored","status":"True"}]}}' | flat)"
expect "create Agent (unknown field spec.declarative.stream preserved)" "$out" '"stream":true'
[[ "$out" != *'"Ignored"'* ]] || { log "FAIL: status was not ignored on create"; exit 1; }
log "ok: status ignored on create (status subresource enabled)"

out="$(api_curl -X POST "${JSON[@]}" "$AG" -d '{"apiVersion":"kagent.dev/v1alpha2","kind":"Agent",
  "metadata":{"name":"bad"},"spec":{"declarative":{"tools":"not-an-array"}}}' | flat)"
expect "schema rejects wrong types" "$out" '"code":422'

now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
out="$(api_curl -X PATCH -H 'Content-Type: application/merge-patch+json' "$AG/a1/status" -d "{
  \"status\":{\"observedGeneration\":1,\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Reconciled\",
  \"message\":\"ok\",\"lastTransitionTime\":\"$now\",\"observedGeneration\":1}]}}" | flat)"
expect "patch /status" "$out" '"reason":"Reconciled","status":"True","type":"Ready"'

out="$(api_curl "$AG/a1" | flat)"
expect "read back status" "$out" '"reason":"Reconciled"'
expect "read back spec" "$out" '"toolNames":["a","b"]'

if [[ "$RESTART" == 1 ]]; then
  "$CLUSTER_SCRIPT_DIR/stop-apiserver.sh" "$STATE_DIR"
  code="$(api_curl -o /dev/null -w '%{http_code}' -X POST "${JSON[@]}" "$AG" \
    -d '{"apiVersion":"kagent.dev/v1alpha2","kind":"Agent","metadata":{"name":"a2"},"spec":{}}' 2>/dev/null || true)"
  [[ "$code" == 000 ]] || { log "FAIL: write while apiserver down returned HTTP $code"; exit 1; }
  log "ok: write fails while apiserver is down"
  "$CLUSTER_SCRIPT_DIR/start-apiserver.sh" "$STATE_DIR" >/dev/null
  [[ "$(api_url)" == "$API" ]] || { log "FAIL: apiserver came back on another port"; exit 1; }
  out="$(api_curl -X POST "${JSON[@]}" "$AG" \
    -d '{"apiVersion":"kagent.dev/v1alpha2","kind":"Agent","metadata":{"name":"a2"},"spec":{}}' | flat)"
  expect "write succeeds after restart" "$out" '"name":"a2"'
  out="$(api_curl "$AG/a1" | flat)"
  expect "data survived restart" "$out" '"reason":"Reconciled"'
fi
log "smoke test passed (namespace $NS left behind; it cannot be finalized without a controller-manager)"
