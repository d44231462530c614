#!/usr/bin/env bash
# A delay shim in front of the real helm, for the crash tests (it is not a fake: every
# command runs the real binary). Around `helm upgrade` (or each command named in
# SLOW_HELM_COMMANDS, e.g. "install upgrade") it waits SLOW_HELM_BEFORE seconds
# (giving up, so helm never runs, if the calling service died meanwhile) and, after helm
# finished, SLOW_HELM_AFTER seconds, so a test can kill the service between the change
# landing and the service recording it.
set -uo pipefail
real="${SLOW_HELM_REAL:?SLOW_HELM_REAL must name the real helm}"
if [[ " ${SLOW_HELM_COMMANDS:-upgrade} " == *" ${1:-none} "* ]]; then
  caller=$PPID
  for ((i = 0; i < ${SLOW_HELM_BEFORE:-0} * 10; i++)); do
    kill -0 "$caller" 2>/dev/null || exit 137
    sleep 0.1
  done
  "$real" "$@"
  rc=$?
  sleep "${SLOW_HELM_AFTER:-0}"
  exit "$rc"
fi
exec "$real" "$@"
