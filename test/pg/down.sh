#!/usr/bin/env bash
# Stop the PostgreSQL that up.sh started in DIR and delete DIR.
# Usage: down.sh [DIR]   (DIR defaults to ${AGENT_MANAGER_PG_DIR:-/tmp/agent-manager-pg})
# Env: AGENT_MANAGER_PG_KEEP_STATE=1 keeps DIR (data, log).
set -euo pipefail

MARKER=".agent-manager-pg"
log() { printf '[pg] %s\n' "$*" >&2; }

DIR="${1:-${AGENT_MANAGER_PG_DIR:-/tmp/agent-manager-pg}}"
if [[ ! -f "$DIR/$MARKER" ]]; then
  # Never delete a directory this tooling did not create (an empty one is harmless to remove).
  [[ -d "$DIR" && -z "$(ls -A "$DIR")" ]] && rmdir "$DIR"
  log "no PostgreSQL of test/pg/up.sh in $DIR; nothing to do"
  exit 0
fi
BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
if [[ -f "$DIR/data/postmaster.pid" ]]; then
  if [[ -n "$BIN" ]] && runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w -t 30 stop >/dev/null 2>&1; then
    log "stopped PostgreSQL in $DIR"
  else
    # pg_ctl missing or failed: stop the postmaster of this data folder by its pid.
    pid="$(head -n 1 "$DIR/data/postmaster.pid" 2>/dev/null || true)"
    if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
      kill -QUIT "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
      log "killed postmaster $pid of $DIR"
    fi
  fi
fi
if [[ "${AGENT_MANAGER_PG_KEEP_STATE:-0}" != 1 ]]; then
  rm -rf "$DIR"
  log "removed $DIR"
fi
