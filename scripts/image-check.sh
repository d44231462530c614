#!/usr/bin/env bash
# CI's image check: builds the image (npm run image:build) and runs it as a user would, with
# podman: the image's own user (not root), a read-only root filesystem with /tmp (tmpfs) and /data (a volume)
# writable (as the chart mounts them), /healthz and /readyz, a dry-run create, then a real
# create, status and delete against a test API server of its own (test/cluster/up.sh). Then the
# chart's Deployment, ConfigMap and a Secret, rendered by helm template, run with podman kube play
# and answer /healthz. Prints the image's size and the seconds from `podman run` to healthy.
# Usage: bash scripts/image-check.sh   (needs: buildah podman runc mmdebstrap; the API server
#        binary test/cluster/build-apiserver.sh builds)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { printf '[image-check] %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }
podman=(podman --runtime runc --cgroup-manager cgroupfs)
limits=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
helm=node_modules/.cache/agent-manager/helm4/helm
kubectl=node_modules/.cache/agent-manager/helm4/kubectl

work="$(mktemp -d /tmp/agent-manager-image-check-XXXXXX)"
chmod 755 "$work"
container="am-image-check-$$"
export AGENT_MANAGER_CLUSTER_DIR="$work/cluster"
cleanup() {
  "${podman[@]}" rm -f -t 5 "$container" >/dev/null 2>&1 || true
  [[ -f "$work/kube.yaml" ]] && "${podman[@]}" kube down "$work/kube.yaml" >/dev/null 2>&1 || true
  "${podman[@]}" volume rm -f am-image-check-data >/dev/null 2>&1 || true
  "${podman[@]}" volume rm -f am-tokens am-agent-manager-policy >/dev/null 2>&1 || true
  [[ -d "$AGENT_MANAGER_CLUSTER_DIR" ]] && bash test/cluster/down.sh "$AGENT_MANAGER_CLUSTER_DIR" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# A port on loopback nothing listens on (the container shares the host's network).
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 10000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
  fail "no free port"
}

# wait_healthy URL SECONDS: polls every 0.1 s; prints the seconds it took.
wait_healthy() {
  local url="$1" limit="$2" start now
  start=$(date +%s.%N)
  while :; do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' "$url")" == 200 ]] && break
    now=$(date +%s.%N)
    awk -v a="$start" -v b="$now" -v l="$limit" 'BEGIN { exit !(b - a > l) }' && return 1
    sleep 0.1
  done
  awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }'
}

# call METHOD URL [BODY]: prints "<status> <body>".
call() {
  local args=(-s -o "$work/body" -w '%{http_code}' -X "$1" "$2")
  [[ $# -ge 3 ]] && args+=(-H 'content-type: application/json' -d "$3")
  printf '%s %s\n' "$(curl "${args[@]}")" "$(cat "$work/body")"
}
expect_status() {
  local want="$1" what="$2" got
  got="$(cat)"
  [[ "${got%% *}" == "$want" ]] || fail "$what: expected $want, got ${got:0:600}"
  log "$what: $want"
}

build_start=$SECONDS
image="$(bash scripts/image-build.sh)"
build_seconds=$((SECONDS - build_start))
size_bytes="$("${podman[@]}" image inspect --format '{{.Size}}' "$image")"
size_mb=$((size_bytes / 1000 / 1000))
log "image $image: $size_mb MB, built in ${build_seconds}s"

log "test API server (test/cluster/up.sh, its own state in $AGENT_MANAGER_CLUSTER_DIR)"
eval "$(bash test/cluster/up.sh "$AGENT_MANAGER_CLUSTER_DIR")"
# The service runs as uid 10001: it reads its own copy of the kubeconfig (certificate and token inline).
cp "$KUBECONFIG" "$work/kubeconfig"
chmod 644 "$work/kubeconfig"
namespace="image-check-$RANDOM"
"$kubectl" create namespace "$namespace" >/dev/null
# A write's modelConfig must name a kagent ModelConfig of the namespace (writes are checked against them).
"$kubectl" apply -n "$namespace" -f - >/dev/null <<'YAML'
apiVersion: kagent.dev/v1alpha2
kind: ModelConfig
metadata: {name: default-model-config}
spec: {provider: OpenAI, model: gpt-4.1-mini, apiKeySecret: openai-key, apiKeySecretKey: OPENAI_API_KEY}
YAML

port="$(free_port)"
url="http://127.0.0.1:$port"
log "podman run --read-only (port $port)"
run_start=$(date +%s.%N)
"${podman[@]}" run -d --name "$container" --network host "${limits[@]}" \
  --read-only --tmpfs /tmp:rw,mode=1777 -v am-image-check-data:/data \
  -v "$work/kubeconfig:/etc/agent-manager/kubeconfig:ro" \
  -e PORT="$port" -e HOST=127.0.0.1 -e AUTH_DISABLED=true -e RECONCILE_AUTOMATIC=false \
  -e KUBECONFIG=/etc/agent-manager/kubeconfig -e HELM_TIMEOUT_SECONDS=60 \
  "$image" >/dev/null
healthy="$(wait_healthy "$url/healthz" 60)" || { "${podman[@]}" logs "$container" >&2; fail "/healthz did not answer 200 within 60 s"; }
healthy="$(awk -v a="$run_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
log "healthy ${healthy}s after podman run"

[[ "$("${podman[@]}" exec "$container" id -u)" == 10001 ]] || fail "the service runs as $("${podman[@]}" exec "$container" id -u), not 10001"
"${podman[@]}" exec "$container" touch /app/written 2>/dev/null && fail "the root filesystem is writable"
log "runs as uid 10001 on a read-only root filesystem"
call GET "$url/readyz" | expect_status 200 /readyz
body='{"name":"image-check","namespace":"'"$namespace"'","modelConfig":"default-model-config","toolset":["preset:read-only"]'
call POST "$url/api/v1/agents" "$body"',"dryRun":true}' | expect_status 200 "dry-run create"
call POST "$url/api/v1/agents" "$body}" | expect_status 201 "create"
"$kubectl" get agents.kagent.dev -n "$namespace" image-check >/dev/null || fail "the created Agent is not in the cluster"
call GET "$url/api/v1/agents/$namespace/image-check/status" | expect_status 200 "status"
call DELETE "$url/api/v1/agents/$namespace/image-check" | expect_status 200 "delete"
"$kubectl" get agents.kagent.dev -n "$namespace" image-check >/dev/null 2>&1 && fail "the deleted Agent is still in the cluster"
"${podman[@]}" rm -f -t 10 "$container" >/dev/null

log "the chart's Deployment with podman kube play"
kube_port="$(free_port)"
# A Secret with one API token (the chart reads it from auth.apiTokens.existingSecret), the chart's
# policy ConfigMap and Deployment. helm template names the image and its port; the service's port
# is moved off 8080 (the pod shares the host's network here).
token="image-check-$RANDOM$RANDOM"
sha="$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)"
# podman 4.3 (Debian's) mounts a Secret's data still base64-encoded and ignores stringData, so this
# run hands the same file over as a ConfigMap of that name (the chart's Secret volume is switched
# below, in this run's copy only).
cat >"$work/kube.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: am-tokens
data:
  tokens.yaml: |
    - name: ci
      sha256: $sha
      groups: [platform-admins]
---
EOF
"$helm" template am deploy/charts/agent-manager --namespace default \
  --set image.repository="${image%:*}" --set image.tag="${image##*:}" --set image.pullPolicy=Never \
  --set auth.apiTokens.existingSecret=am-tokens \
  --set-json 'auth.policy.inline={"roles":{"viewer":["list_agents","get_agent"]},"bindings":[{"role":"viewer","groups":["platform-admins"],"namespaces":["*"]}]}' \
  --set database.sqlite.volume=emptyDir --set config.reconcileAutomatic=false \
  --set-json "extraEnv=[{\"name\":\"PORT\",\"value\":\"$kube_port\"}]" \
  --show-only templates/policy-configmap.yaml --show-only templates/deployment.yaml >>"$work/kube.yaml"
# The pod shares the host's network here, where podman refuses port mappings: the container's
# declared ports are left out of this run's copy (the service listens on PORT all the same).
sed -i '/^          ports:$/,/^              protocol: TCP$/d' "$work/kube.yaml"
node -e '
  const fs = require("node:fs");
  const file = process.argv[1];
  const text = fs.readFileSync(file, "utf8");
  const from = "secret:\n            secretName: am-tokens\n";
  if (!text.includes(from)) { console.error("the Deployment has no Secret volume am-tokens"); process.exit(1); }
  fs.writeFileSync(file, text.replace(from, "configMap:\n            name: am-tokens\n"));
' "$work/kube.yaml" || fail "the Deployment's token Secret volume could not be handed over as a ConfigMap"
grep -q 'containerPort' "$work/kube.yaml" && fail "the Deployment's ports could not be left out for podman's host network"
# kube play has no --ulimit: the same limits as podman's defaults, for this run only.
printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n' >"$work/containers.conf"
# kube play keeps a ConfigMap's volume after kube down: an earlier run's would shadow this run's files.
"${podman[@]}" volume rm -f am-tokens am-agent-manager-policy >/dev/null 2>&1 || true
play_start=$(date +%s.%N)
CONTAINERS_CONF="$work/containers.conf" "${podman[@]}" kube play --network host "$work/kube.yaml" >/dev/null 2>"$work/play.err" \
  || { cat "$work/play.err" >&2; fail "podman kube play"; }
wait_healthy "http://127.0.0.1:$kube_port/healthz" 60 >/dev/null || {
  "${podman[@]}" logs am-agent-manager-pod-0-agent-manager >&2 || true
  fail "the chart's Deployment did not answer /healthz within 60 s"
}
kube_healthy="$(awk -v a="$play_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
# With the Secret's token the caller is known (an unknown one answers 401); the ConfigMap's policy
# grants listing (another operation would answer 403).
code="$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer wrong-$token" "http://127.0.0.1:$kube_port/api/v1/agents")"
[[ "$code" == 401 ]] || fail "an unknown token answered $code, not 401"
code="$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $token" -X DELETE "http://127.0.0.1:$kube_port/api/v1/agents/default/none")"
[[ "$code" == 403 ]] || fail "a delete the ConfigMap's policy does not grant answered $code, not 403"
log "podman kube play: /healthz 200 after ${kube_healthy}s; the Secret's token is known, the ConfigMap's policy applies"
"${podman[@]}" kube down "$work/kube.yaml" >/dev/null

printf 'image %s: %s MB (goal <= 250 MB), built in %ss, healthy %ss after podman run; chart Deployment via podman kube play healthy after %ss\n' \
  "$image" "$size_mb" "$build_seconds" "$healthy" "$kube_healthy"
