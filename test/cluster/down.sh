#!/usr/bin/env bash
# Stop kube-apiserver (first: it can hang on SIGTERM once etcd is gone), then
# etcd, and delete STATE_DIR.
# Usage: down.sh [STATE_DIR]
#   STATE_DIR defaults to ${AGENT_MANAGER_CLUSTER_DIR:-$HOME/.cache/agent-manager/cluster}
# Env: AGENT_MANAGER_CLUSTER_KEEP_STATE=1 keeps STATE_DIR (logs, etcd data).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
resolve_state_dir "${1:-}"
if [[ ! -f "$STATE_DIR/$CLUSTER_MARKER" ]]; then
  # Refuse to delete a directory this tooling did not create.
  if [[ -z "$(ls -A "$STATE_DIR")" ]]; then rmdir "$STATE_DIR"; fi
  log "no cluster state in $STATE_DIR; nothing to do"
  exit 0
fi
start=$SECONDS
stop_process apiserver 5
stop_process etcd 5
if [[ "${AGENT_MANAGER_CLUSTER_KEEP_STATE:-0}" != 1 ]]; then
  rm -rf "$STATE_DIR"
  log "removed $STATE_DIR"
fi
log "cluster down in $((SECONDS - start))s"
