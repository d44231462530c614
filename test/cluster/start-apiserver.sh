#!/usr/bin/env bash
# Start kube-apiserver again (after stop-apiserver.sh) on the SAME port, against
# the still-running etcd of STATE_DIR. Waits for /readyz.
# Usage: start-apiserver.sh [STATE_DIR]   (stdout: export KUBECONFIG=...)
exec "$(dirname "${BASH_SOURCE[0]}")/up.sh" --apiserver-only "$@"
