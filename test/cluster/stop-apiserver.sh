#!/usr/bin/env bash
# Stop only kube-apiserver of STATE_DIR (SIGTERM, SIGKILL after 5s); etcd and all
# state are kept, so start-apiserver.sh brings it back on the same port and data.
# Usage: stop-apiserver.sh [STATE_DIR]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
resolve_state_dir "${1:-}"
[[ -f "$STATE_DIR/$CLUSTER_MARKER" ]] || die "no cluster state in $STATE_DIR"
exec 8>"$STATE_DIR/.lock"
flock 8
stop_process apiserver 5
