#!/usr/bin/env bash
# npm run image:build: builds the repository's Dockerfile as agent-manager:<version>.
#   With a Docker daemon: docker build (base node:20-slim).
#   Otherwise: buildah bud --isolation chroot (Debian's buildah; podman runs the result).
#   Where the registry cannot be reached (or with --local-base), the bases are made first from
#   Debian's packages and Node.js from npm (scripts/image-base.sh) and passed as NODE_IMAGE and
#   RUN_IMAGE; the Dockerfile is the same.
# Usage: npm run image:build [-- --local-base] [-- --tag NAME:TAG]
# stdout: the image name. Progress goes to stderr.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tag="agent-manager:$(node -p 'require("./package.json").version')"
local_base=auto
while (($#)); do
  case "$1" in
    --local-base) local_base=yes ;;
    --tag) tag="$2"; shift ;;
    *) echo "image-build: unknown option $1 (known: --local-base, --tag NAME:TAG)" >&2; exit 2 ;;
  esac
  shift
done

log() { printf '[image-build] %s\n' "$*" >&2; }

if docker info >/dev/null 2>&1; then
  engine=(docker build)
elif command -v buildah >/dev/null; then
  engine=(buildah bud --isolation chroot --layers)
else
  echo "image-build: neither a Docker daemon nor buildah is available (Debian: apt-get install buildah podman)" >&2
  exit 1
fi

if [[ "$local_base" == auto ]]; then
  local_base=no
  if [[ "${engine[0]}" == buildah ]] && ! podman image exists docker.io/library/node:20-slim 2>/dev/null \
    && ! curl -s --max-time 5 -o /dev/null https://registry-1.docker.io/v2/; then
    log "the registry cannot be reached: making the Node.js bases from Debian's packages and npm"
    local_base=yes
  fi
fi

args=()
if [[ "$local_base" == yes ]]; then
  mapfile -t bases < <(bash scripts/image-base.sh)
  args+=(--build-arg "NODE_IMAGE=${bases[0]}" --build-arg "RUN_IMAGE=${bases[1]}")
fi

start=$SECONDS
log "${engine[*]} ${args[*]} -t $tag ."
"${engine[@]}" "${args[@]}" -t "$tag" . >&2
log "built $tag in $((SECONDS - start))s"
echo "$tag"
