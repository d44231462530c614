#!/usr/bin/env bash
# Build (once) a kube-apiserver binary from Debian's Kubernetes source package
# and cache it outside the repository. Prints the binary path on stdout (last
# line); everything else goes to stderr.
#
# Also makes sure the runtime tools used by up.sh are installed (etcd, openssl,
# curl), installing missing ones with apt-get.
#
# Env:
#   AGENT_MANAGER_CACHE_DIR   cache root (default: $HOME/.cache/agent-manager)
#   AGENT_MANAGER_KEEP_BUILD  1 = keep the unpacked source tree after building
#   KUBE_APISERVER_BIN        use this binary instead of building one
#
# Safe for CI: no prompts, a lock serialises concurrent invocations.
set -euo pipefail

KUBE_VERSION="v1.20.2"
KUBE_GIT_COMMIT="faecb196815e248d3ecfb03c680a4507229c2a56" # upstream v1.20.2 tag
CACHE_ROOT="${AGENT_MANAGER_CACHE_DIR:-$HOME/.cache/agent-manager}"
BIN_DIR="$CACHE_ROOT/kube-apiserver-$KUBE_VERSION"
BIN="$BIN_DIR/kube-apiserver"
BUILD_ROOT="$CACHE_ROOT/build/kubernetes-$KUBE_VERSION"

log() { printf '[build-apiserver] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if [[ -n "${KUBE_APISERVER_BIN:-}" ]]; then
  [[ -x "$KUBE_APISERVER_BIN" ]] || die "KUBE_APISERVER_BIN=$KUBE_APISERVER_BIN is not executable"
  echo "$KUBE_APISERVER_BIN"
  exit 0
fi

SUDO=""
if [[ "$(id -u)" != "0" ]]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; fi
fi
export DEBIAN_FRONTEND=noninteractive

APT_UPDATED=0
apt_update() {
  if [[ "$APT_UPDATED" == 0 ]]; then
    log "apt-get update"
    $SUDO apt-get update -qq >&2
    APT_UPDATED=1
  fi
}
apt_install() {
  apt_update
  log "apt-get install $*"
  $SUDO apt-get install -y -qq --no-install-recommends "$@" >&2
}

# Runtime tools needed by up.sh (cheap check, installs only what is missing).
ensure_runtime_deps() {
  local missing=()
  command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v curl >/dev/null 2>&1 || missing+=(curl ca-certificates)
  command -v flock >/dev/null 2>&1 || missing+=(util-linux)
  if ((${#missing[@]})); then apt_install "${missing[@]}"; fi
}

# Add deb-src entries mirroring the configured deb entries (needed for `apt-get source`).
ensure_deb_src() {
  if grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
    return 0
  fi
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    log "enabling deb-src in /etc/apt/sources.list.d/debian-src.sources"
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
      $SUDO tee /etc/apt/sources.list.d/debian-src.sources >/dev/null
  elif [[ -f /etc/apt/sources.list ]] && grep -qE '^deb ' /etc/apt/sources.list; then
    log "enabling deb-src in /etc/apt/sources.list.d/debian-src.list"
    grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
      $SUDO tee /etc/apt/sources.list.d/debian-src.list >/dev/null
  else
    die "no apt sources found to derive deb-src entries from"
  fi
  APT_UPDATED=0
}

build() {
  ensure_deb_src
  local need=()
  command -v rsync >/dev/null 2>&1 || need+=(rsync)
  command -v make >/dev/null 2>&1 || need+=(make)
  [[ -x /usr/lib/go/bin/go ]] || need+=(golang-go)
  [[ -d /usr/share/gocode/src/github.com/modern-go/reflect2 ]] || need+=(golang-github-modern-go-reflect2-dev)
  [[ -d /usr/share/gocode/src/github.com/json-iterator/go ]] || need+=(golang-github-json-iterator-go-dev)
  # apt-get source needs a fresh index including the deb-src entries.
  apt_update
  if ((${#need[@]})); then apt_install "${need[@]}"; fi

  # Debian's Go (1.19 on bookworm) is what this recipe was validated with.
  export PATH="/usr/lib/go/bin:$PATH"
  unset GOFLAGS GOBIN GOROOT GOTOOLCHAIN
  log "using $(go version)"

  mkdir -p "$BUILD_ROOT"
  local dl="$BUILD_ROOT/download"
  mkdir -p "$dl"
  local orig
  orig=$(find "$dl" -maxdepth 1 -name "kubernetes_*1.20.2.orig.tar.gz" | head -n1)
  if [[ -z "$orig" ]]; then
    log "downloading Debian source package 'kubernetes'"
    (cd "$dl" && apt-get source --download-only kubernetes >&2 2> >(grep -v 'unsandboxed as root' >&2))
    orig=$(find "$dl" -maxdepth 1 -name "kubernetes_*1.20.2.orig.tar.gz" | head -n1)
    [[ -n "$orig" ]] || die "Debian source package is not Kubernetes 1.20.2 (got: $(echo "$dl"/*))"
  fi

  local tree="$BUILD_ROOT/kubernetes-1.20.2"
  rm -rf "$tree" "$BUILD_ROOT/.go"
  log "unpacking $(basename "$orig")"
  tar -xzf "$orig" -C "$BUILD_ROOT"
  [[ -f "$tree/cmd/kube-apiserver/apiserver.go" ]] || die "unexpected source layout in $orig"

  # The vendored reflect2 1.0.1 crashes (fatal error: fault in mapiterinit) under
  # Go >= 1.18 when decoding custom resources; use Debian's newer copies.
  local pkg
  for pkg in github.com/modern-go/reflect2 github.com/json-iterator/go; do
    local src="/usr/share/gocode/src/$pkg" dst="$tree/vendor/$pkg"
    log "replacing vendor/$pkg with $src"
    find "$dst" -maxdepth 1 -type f \( -name '*.go' -o -name '*.s' \) ! -name '*_test.go' -delete
    find "$src" -maxdepth 1 -type f \( -name '*.go' -o -name '*.s' \) ! -name '*_test.go' -exec cp {} "$dst/" \;
  done

  local verfile="$BUILD_ROOT/version.env"
  cat >"$verfile" <<EOF
KUBE_GIT_VERSION='$KUBE_VERSION'
KUBE_GIT_MAJOR='1'
KUBE_GIT_MINOR='20'
KUBE_GIT_COMMIT='$KUBE_GIT_COMMIT'
KUBE_GIT_TREE_STATE='clean'
EOF
  mkdir -p "$BUILD_ROOT/.go/src/k8s.io"
  ln -sfn "$tree" "$BUILD_ROOT/.go/src/k8s.io/kubernetes"

  log "building cmd/kube-apiserver (takes 4 to 9 min on 2 cores, more when they are shared; ~1.3 GB RAM)"
  local start=$SECONDS
  (
    cd "$BUILD_ROOT/.go/src/k8s.io/kubernetes"
    GOPATH="$BUILD_ROOT/.go" CGO_ENABLED=0 GO111MODULE=off \
      KUBE_BUILD_PLATFORMS=linux/amd64 KUBE_GIT_VERSION_FILE="$verfile" \
      make WHAT=cmd/kube-apiserver >&2
  )
  log "build finished in $((SECONDS - start)) s"

  local out="$tree/_output/local/bin/linux/amd64/kube-apiserver"
  [[ -x "$out" ]] || out="$tree/_output/bin/kube-apiserver"
  [[ -x "$out" ]] || die "build produced no kube-apiserver binary"
  mkdir -p "$BIN_DIR"
  cp "$out" "$BIN.tmp.$$"
  mv -f "$BIN.tmp.$$" "$BIN"
  if [[ "${AGENT_MANAGER_KEEP_BUILD:-0}" != 1 ]]; then
    rm -rf "$tree" "$BUILD_ROOT/.go"
  fi
}

ensure_runtime_deps
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.build-apiserver.lock"
flock 9
if [[ ! -x "$BIN" ]]; then
  build
fi
"$BIN" --version >&2 || die "$BIN does not run"
echo "$BIN"
