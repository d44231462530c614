#!/usr/bin/env bash
# `npm run test:pg`: the integration, e2e and cluster suites against a throw-away PostgreSQL.
# Starts one with up.sh (a new folder under /tmp, a free port), exports TEST_DATABASE_URL (each
# test app then gets its own database on it), runs jest, always stops the server, and exits
# with jest's code.
# Usage: run.sh [JEST ARGS...]   (default: --selectProjects integration e2e cluster)
# Env: TEST_DATABASE_URL already set -> that server is used and nothing is started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

args=("$@")
((${#args[@]})) || args=(--selectProjects integration e2e cluster)

if [[ -z "${TEST_DATABASE_URL:-}" ]]; then
  PG_DIR="$(mktemp -d /tmp/agent-manager-pg-XXXXXX)"
  trap 'bash test/pg/down.sh "$PG_DIR"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  env_line="$(bash test/pg/up.sh "$PG_DIR")"
  eval "$env_line"
  export TEST_DATABASE_URL
fi
printf '[pg] running jest against %s\n' "$TEST_DATABASE_URL" >&2

set +e
mkdir -p reports
node --experimental-vm-modules node_modules/jest/bin/jest.js --runInBand --forceExit --json --outputFile=reports/jest-postgresql.json "${args[@]}"
rc=$?
set -e
exit "$rc"
