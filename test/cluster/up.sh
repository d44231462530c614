#!/usr/bin/env bash
# Start a local Kubernetes control plane (etcd + kube-apiserver v1.20.2, no
# controller-manager/scheduler/kubelet) for e2e tests, and install the kagent
# CRD fixtures from crds/.
#
# Usage: up.sh [--apiserver-only] [STATE_DIR]
#   STATE_DIR defaults to ${AGENT_MANAGER_CLUSTER_DIR:-$HOME/.cache/agent-manager/cluster}
#   --apiserver-only  restart only kube-apiserver on its previous port against the
#                     running etcd (same as start-apiserver.sh)
#
# stdout: a single line `export KUBECONFIG=<STATE_DIR>/kubeconfig`, so
#   eval "$(test/cluster/up.sh)"   works. Progress goes to stderr.
# Writes STATE_DIR/{kubeconfig,env,token,pki/,*.pid,*.port,*.log,etcd-data/}.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

APISERVER_ONLY=0
if [[ "${1:-}" == --apiserver-only ]]; then APISERVER_ONLY=1; shift; fi
resolve_state_dir "${1:-}"

exec 8>"$STATE_DIR/.lock"
flock 8

if [[ "$APISERVER_ONLY" == 1 ]]; then
  [[ -f "$STATE_DIR/$CLUSTER_MARKER" ]] || die "no cluster state in $STATE_DIR (run up.sh first)"
  if ! pid_alive etcd || ! etcd_healthy; then die "etcd is not running for $STATE_DIR (run up.sh)"; fi
  if pid_alive apiserver && apiserver_ready; then
    log "kube-apiserver already running at $(api_url)"
  else
    stop_process apiserver 5
    BIN="$("$CLUSTER_SCRIPT_DIR/build-apiserver.sh")"
    start=$SECONDS
    start_apiserver "$BIN"
    log "kube-apiserver ready at $(api_url) after $((SECONDS - start))s"
  fi
  echo "export KUBECONFIG=$STATE_DIR/kubeconfig"
  exit 0
fi

if [[ -f "$STATE_DIR/$CLUSTER_MARKER" ]] && pid_alive etcd && pid_alive apiserver && apiserver_ready; then
  log "cluster already running at $(api_url) (state: $STATE_DIR)"
  echo "export KUBECONFIG=$STATE_DIR/kubeconfig"
  exit 0
fi

BIN="$("$CLUSTER_SCRIPT_DIR/build-apiserver.sh")"
start=$SECONDS
touch "$STATE_DIR/$CLUSTER_MARKER"

started=()
cleanup_on_error() {
  local rc=$?
  if ((rc != 0)) && ((${#started[@]})); then
    log "startup failed; stopping processes started by this run (state kept in $STATE_DIR for debugging)"
    local i
    for ((i = ${#started[@]} - 1; i >= 0; i--)); do stop_process "${started[i]}" 5; done
  fi
}
trap cleanup_on_error EXIT

init_credentials
if pid_alive etcd && etcd_healthy; then
  log "etcd already running on 127.0.0.1:$(cat "$STATE_DIR/etcd.port")"
else
  stop_process etcd 5
  start_etcd
  started+=(etcd)
fi
if pid_alive apiserver && apiserver_ready; then
  log "kube-apiserver already running at $(api_url)"
else
  stop_process apiserver 5
  start_apiserver "$BIN"
  started+=(apiserver)
fi
write_kubeconfig
install_crds
trap - EXIT

log "cluster ready at $(api_url) in $((SECONDS - start))s (state: $STATE_DIR)"
log "no controller-manager: deleted namespaces stay Terminating; use a fresh namespace per test"
echo "export KUBECONFIG=$STATE_DIR/kubeconfig"
