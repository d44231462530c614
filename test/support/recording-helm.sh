#!/usr/bin/env bash
# A recording shim in front of the real helm (not a fake: every command runs the real binary):
# appends each command line to RECORDING_HELM_LOG, so a test can tell which helm processes a
# service started.
set -uo pipefail
real="${RECORDING_HELM_REAL:?RECORDING_HELM_REAL must name the real helm}"
printf '%s\n' "$*" >>"${RECORDING_HELM_LOG:?RECORDING_HELM_LOG must name a file}"
exec "$real" "$@"
