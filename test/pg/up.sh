#!/usr/bin/env bash
# Start a throw-away PostgreSQL (Debian's package, newest /usr/lib/postgresql/*/bin; installed
# with apt-get when missing) on 127.0.0.1 on a free port, as the postgres user, for the
# integration and e2e suites.
#
# Usage: up.sh [DIR]
#   DIR defaults to ${AGENT_MANAGER_PG_DIR:-/tmp/agent-manager-pg}; it holds data/, log, port
#   and the Unix socket, and must be reachable by the postgres user (so not under /root).
#   When a server of this tooling already runs in DIR, its URL is printed again.
#
# stdout: a single line `export TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:PORT/postgres`,
#   so `eval "$(test/pg/up.sh)"` works. Progress goes to stderr. Stop with down.sh [DIR].
# Env: TEST_PG_PORT=N listens on N instead of a free port.
# Test-only settings: trust authentication; fsync, synchronous_commit, full_page_writes off.
set -euo pipefail

MARKER=".agent-manager-pg"
log() { printf '[pg] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

server_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true; }

# A first run on a fresh Debian machine: install Debian's server package (about a minute).
install_postgresql() {
  [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null \
    || die "PostgreSQL server not found in /usr/lib/postgresql/*/bin: install it (Debian: apt-get install postgresql), then run again"
  log "PostgreSQL server not found: installing Debian's postgresql package with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  local install=(apt-get install -y -qq --no-install-recommends postgresql)
  "${install[@]}" >&2 || { apt-get update -qq >&2 && "${install[@]}" >&2; } || die "apt-get install postgresql failed"
}

BIN="$(server_bin)"
if [[ -z "$BIN" || ! -x "$BIN/initdb" ]] || ! id postgres >/dev/null 2>&1; then
  install_postgresql
  BIN="$(server_bin)"
fi
[[ -n "$BIN" && -x "$BIN/initdb" && -x "$BIN/pg_ctl" ]] || die "PostgreSQL server not found in /usr/lib/postgresql/*/bin after installing it"
id postgres >/dev/null 2>&1 || die "no postgres user: apt-get install postgresql"
[[ $(id -u) == 0 ]] || die "run as root: initdb and pg_ctl run as the postgres user through runuser"

DIR="${1:-${AGENT_MANAGER_PG_DIR:-/tmp/agent-manager-pg}}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
as_pg() { runuser -u postgres -- "$@"; }
url() { echo "export TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:$(cat "$DIR/port")/postgres"; }

if [[ -f "$DIR/$MARKER" && -f "$DIR/port" ]] && as_pg "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
  log "PostgreSQL already running on 127.0.0.1:$(cat "$DIR/port") (dir: $DIR)"
  url
  exit 0
fi
if [[ ! -f "$DIR/$MARKER" && -n "$(ls -A "$DIR")" ]]; then
  die "$DIR is not empty and was not made by test/pg/up.sh"
fi
touch "$DIR/$MARKER"
chown postgres: "$DIR"
chmod 700 "$DIR"
as_pg test -w "$DIR" || die "$DIR is not writable by the postgres user (use a folder under /tmp, not /root)"

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})' 2>/dev/null \
    || python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1]);s.close()'
}

start=$SECONDS
if [[ ! -f "$DIR/data/PG_VERSION" ]]; then
  as_pg "$BIN/initdb" -A trust -U postgres -E UTF8 --no-sync -D "$DIR/data" >"$DIR/initdb.log" 2>&1 \
    || { cat "$DIR/initdb.log" >&2; die "initdb failed ($BIN)"; }
fi

for attempt in 1 2 3; do
  PORT="${TEST_PG_PORT:-$(free_port)}"
  opts="-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=300"
  opts+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  if as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w -t 60 -o "$opts" start >/dev/null; then
    echo "$PORT" >"$DIR/port"
    break
  fi
  tail -n 20 "$DIR/log" >&2 || true
  # another process may have taken the port between the probe and the start
  [[ -z "${TEST_PG_PORT:-}" && $attempt -lt 3 ]] || die "pg_ctl start failed (log: $DIR/log)"
  log "retrying on another port"
done

log "PostgreSQL $("$BIN/postgres" -V | awk '{print $3}') ready on 127.0.0.1:$PORT in $((SECONDS - start))s (dir: $DIR)"
url
