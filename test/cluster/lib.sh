# shellcheck shell=bash
# Shared helpers for the local test control plane (etcd + kube-apiserver).
# Sourced by up.sh, down.sh, start-apiserver.sh, stop-apiserver.sh.

CLUSTER_SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck disable=SC2034 # used by the sourcing scripts
CLUSTER_MARKER=".agent-manager-cluster"

log() { printf '[cluster] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# resolve_state_dir [DIR] -> sets STATE_DIR (absolute path)
resolve_state_dir() {
  STATE_DIR="${1:-${AGENT_MANAGER_CLUSTER_DIR:-$HOME/.cache/agent-manager/cluster}}"
  mkdir -p "$STATE_DIR"
  STATE_DIR="$(cd "$STATE_DIR" && pwd)"
}

# pid_alive NAME -> true if $STATE_DIR/NAME.pid names a live process running binary NAME
pid_alive() {
  local name="$1" pidfile="$STATE_DIR/$1.pid" pid
  [[ -f "$pidfile" ]] || return 1
  pid="$(cat "$pidfile" 2>/dev/null)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # Guard against pid reuse: the process must be the expected binary.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$name" || return 1
}

# stop_process NAME [GRACE_SECONDS]: SIGTERM, then SIGKILL after the grace period.
stop_process() {
  local name="$1" grace="${2:-5}" pid i
  if ! pid_alive "$name"; then
    rm -f "$STATE_DIR/$name.pid"
    return 0
  fi
  pid="$(cat "$STATE_DIR/$name.pid")"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name (pid $pid) did not exit after ${grace}s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -f "$STATE_DIR/$name.pid"
  log "stopped $name (pid $pid)"
}

# port_in_use PORT -> true if something accepts connections on 127.0.0.1:PORT
port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# free_port -> prints a port on 127.0.0.1 that nothing listens on (and not used
# by this state dir already). It is taken below the kernel's ephemeral range, which
# outgoing connections draw from: a port there can be busy without anything listening.
free_port() {
  local p i low=32768
  [[ -r /proc/sys/net/ipv4/ip_local_port_range ]] && read -r low _ </proc/sys/net/ipv4/ip_local_port_range
  ((low > 12000)) || low=32768
  for ((i = 0; i < 200; i++)); do
    p=$((10000 + RANDOM % (low - 10000)))
    port_in_use "$p" && continue
    grep -qsx "$p" "$STATE_DIR"/*.port && continue
    echo "$p"
    return 0
  done
  die "could not find a free port"
}

# spawn NAME LOGFILE CMD... : run CMD detached (own session, no stdin), record pid.
spawn() {
  local name="$1" logfile="$2"
  shift 2
  # The inner shell writes its own pid and then execs, so the pid file always
  # names the real process even if setsid forks. Lock fds (8, 9) are closed so
  # the daemons do not hold the scripts' flocks.
  # shellcheck disable=SC2016
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$STATE_DIR/$name.pid" "$@" \
    </dev/null >>"$logfile" 2>&1 8>&- 9>&- &
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -s "$STATE_DIR/$name.pid" ]] && return 0
    sleep 0.05
  done
  die "failed to start $name"
}

api_url() { echo "https://127.0.0.1:$(cat "$STATE_DIR/apiserver.port")"; }

# api_curl [CURL ARGS...] PATH_OR_URL: authenticated request against the apiserver.
api_curl() {
  curl -sS --max-time "${API_CURL_TIMEOUT:-10}" --cacert "$STATE_DIR/pki/ca.crt" \
    -H "Authorization: Bearer $(cat "$STATE_DIR/token")" "$@"
}

apiserver_ready() {
  [[ -f "$STATE_DIR/apiserver.port" ]] || return 1
  [[ "$(API_CURL_TIMEOUT=3 api_curl -o /dev/null -w '%{http_code}' "$(api_url)/readyz" 2>/dev/null)" == 200 ]]
}

etcd_healthy() {
  [[ -f "$STATE_DIR/etcd.port" ]] || return 1
  curl -sS --max-time 3 "http://127.0.0.1:$(cat "$STATE_DIR/etcd.port")/health" 2>/dev/null | grep -q '"health":"true"'
}

start_etcd() {
  [[ -f "$STATE_DIR/etcd.port" ]] || free_port >"$STATE_DIR/etcd.port"
  [[ -f "$STATE_DIR/etcd-peer.port" ]] || free_port >"$STATE_DIR/etcd-peer.port"
  local cport pport
  cport="$(cat "$STATE_DIR/etcd.port")"
  pport="$(cat "$STATE_DIR/etcd-peer.port")"
  port_in_use "$cport" && die "etcd client port $cport is already in use"
  port_in_use "$pport" && die "etcd peer port $pport is already in use"
  mkdir -p "$STATE_DIR/etcd-data"
  chmod 700 "$STATE_DIR/etcd-data"
  log "starting etcd on 127.0.0.1:$cport (log: $STATE_DIR/etcd.log)"
  spawn etcd "$STATE_DIR/etcd.log" etcd \
    --name=default \
    --data-dir="$STATE_DIR/etcd-data" \
    --listen-client-urls="http://127.0.0.1:$cport" \
    --advertise-client-urls="http://127.0.0.1:$cport" \
    --listen-peer-urls="http://127.0.0.1:$pport" \
    --initial-advertise-peer-urls="http://127.0.0.1:$pport" \
    --initial-cluster="default=http://127.0.0.1:$pport" \
    --logger=zap --log-outputs=stderr --log-level=warn
  local i
  for ((i = 0; i < 200; i++)); do
    etcd_healthy && return 0
    pid_alive etcd || { tail -n 30 "$STATE_DIR/etcd.log" >&2; die "etcd exited during startup"; }
    sleep 0.1
  done
  tail -n 30 "$STATE_DIR/etcd.log" >&2
  die "etcd did not become healthy within 20s"
}

# One-time material: CA + serving cert, service-account key pair, admin token.
init_credentials() {
  local pki="$STATE_DIR/pki"
  mkdir -p "$pki"
  chmod 700 "$pki"
  if [[ ! -f "$pki/ca.crt" ]]; then
    log "generating CA, serving certificate and service-account key"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=agent-manager-test-ca" \
      -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
      -keyout "$pki/apiserver.key" -out "$pki/apiserver.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n' >"$pki/apiserver.ext"
    openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
      -days 3650 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt" 2>/dev/null
    openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
    openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  fi
  if [[ ! -f "$STATE_DIR/token" ]]; then
    (umask 077 && openssl rand -hex 24 >"$STATE_DIR/token")
    (umask 077 && printf '%s,admin,admin-uid,"system:masters"\n' "$(cat "$STATE_DIR/token")" >"$pki/tokens.csv")
  fi
}

# The API groups the test control plane serves: what the charts render (core, apps, rbac, policy's
# PodDisruptionBudget, autoscaling's HPA, networking's NetworkPolicy), what the suites and helm call
# (authorization's SubjectAccessReviews, authentication, admissionregistration's webhooks) and CRDs,
# nothing else. Every helm install or upgrade downloads and parses the server's OpenAPI document to
# validate the manifests on the client (a 1.20 API server has no server-side field validation): all
# groups make it 3.8 MB, these 2.5 MB, and the API server starts on a third less CPU. API priority and fairness goes with flowcontrol.
SERVED_APIS='api/all=false,api/v1=true,apps/v1=true,rbac.authorization.k8s.io/v1=true,admissionregistration.k8s.io/v1=true,apiextensions.k8s.io/v1=true,apiregistration.k8s.io/v1=true,authorization.k8s.io/v1=true,authentication.k8s.io/v1=true,autoscaling/v2beta2=true,policy/v1beta1=true,networking.k8s.io/v1=true'
# Admission plugins that watch a group no longer served (StorageClasses, RuntimeClasses,
# PriorityClasses) would keep the server from ever becoming ready. ServiceAccount: no controller
# manager creates the tokens it waits for.
DISABLED_ADMISSION='ServiceAccount,DefaultStorageClass,PersistentVolumeClaimResize,StorageObjectInUseProtection,RuntimeClass,Priority'

start_apiserver() {
  local bin="$1"
  [[ -f "$STATE_DIR/apiserver.port" ]] || free_port >"$STATE_DIR/apiserver.port"
  local port pki="$STATE_DIR/pki"
  port="$(cat "$STATE_DIR/apiserver.port")"
  port_in_use "$port" && die "apiserver port $port is already in use"
  log "starting kube-apiserver on https://127.0.0.1:$port (log: $STATE_DIR/apiserver.log)"
  spawn apiserver "$STATE_DIR/apiserver.log" "$bin" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --secure-port="$port" \
    --insecure-port=0 \
    --etcd-servers="http://127.0.0.1:$(cat "$STATE_DIR/etcd.port")" \
    --cert-dir="$pki" \
    --tls-cert-file="$pki/apiserver.crt" \
    --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" \
    --token-auth-file="$pki/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-key-file="$pki/sa.pub" \
    --service-account-signing-key-file="$pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --api-audiences=https://kubernetes.default.svc \
    --service-cluster-ip-range=10.0.0.0/24 \
    --disable-admission-plugins="$DISABLED_ADMISSION" \
    --allow-privileged=true \
    --profiling=false \
    --runtime-config="$SERVED_APIS" \
    --enable-priority-and-fairness=false \
    --logtostderr=true --v=1
  local i
  for ((i = 0; i < "${AGENT_MANAGER_CLUSTER_READY_TIMEOUT:-60}" * 5; i++)); do
    apiserver_ready && return 0
    pid_alive apiserver || { tail -n 30 "$STATE_DIR/apiserver.log" >&2; die "kube-apiserver exited during startup"; }
    sleep 0.2
  done
  tail -n 30 "$STATE_DIR/apiserver.log" >&2
  die "kube-apiserver not ready within ${AGENT_MANAGER_CLUSTER_READY_TIMEOUT:-60}s"
}

write_kubeconfig() {
  local ca_data
  ca_data="$(base64 -w0 <"$STATE_DIR/pki/ca.crt")"
  (umask 077 && cat >"$STATE_DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: agent-manager-test
    cluster:
      server: $(api_url)
      certificate-authority-data: $ca_data
users:
  - name: admin
    user:
      token: $(cat "$STATE_DIR/token")
contexts:
  - name: agent-manager-test
    context:
      cluster: agent-manager-test
      user: admin
      namespace: default
current-context: agent-manager-test
EOF
  )
  cat >"$STATE_DIR/env" <<EOF
export KUBECONFIG='$STATE_DIR/kubeconfig'
export AGENT_MANAGER_CLUSTER_DIR='$STATE_DIR'
export K8S_API_URL='$(api_url)'
export K8S_CA_FILE='$STATE_DIR/pki/ca.crt'
export K8S_TOKEN_FILE='$STATE_DIR/token'
EOF
}

# kubectl to use for CRDs: $AGENT_MANAGER_CLUSTER_KUBECTL (path, or "none" to
# force the curl path), else kubectl on PATH.
find_kubectl() {
  local k="${AGENT_MANAGER_CLUSTER_KUBECTL:-}"
  if [[ "$k" == none ]]; then return 1; fi
  if [[ -n "$k" ]]; then [[ -x "$k" ]] && echo "$k" && return 0; return 1; fi
  command -v kubectl 2>/dev/null
}

install_crds() {
  local kubectl f name code
  if kubectl="$(find_kubectl)"; then
    log "applying CRDs with $kubectl"
    "$kubectl" --kubeconfig "$STATE_DIR/kubeconfig" apply -f "$CLUSTER_SCRIPT_DIR/crds/" >&2 ||
      die "kubectl apply of CRDs failed"
  else
    log "applying CRDs through the REST API (curl)"
    for f in "$CLUSTER_SCRIPT_DIR"/crds/json/*.json; do
      code="$(api_curl -o "$STATE_DIR/.crd-resp" -w '%{http_code}' -X POST \
        -H 'Content-Type: application/json' --data-binary "@$f" \
        "$(api_url)/apis/apiextensions.k8s.io/v1/customresourcedefinitions")"
      if [[ "$code" == 409 ]]; then
        name="$(tr -d ' \n' <"$f" | grep -o '"metadata":{"name":"[^"]*"' | sed 's/.*"name":"//; s/"$//')"
        code="$(api_curl -o "$STATE_DIR/.crd-resp" -w '%{http_code}' -X PATCH \
          -H 'Content-Type: application/merge-patch+json' --data-binary "@$f" \
          "$(api_url)/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$name")"
      fi
      [[ "$code" == 200 || "$code" == 201 ]] || { cat "$STATE_DIR/.crd-resp" >&2; die "applying $f failed (HTTP $code)"; }
      log "applied $(basename "$f")"
    done
    rm -f "$STATE_DIR/.crd-resp"
  fi
  # Wait until every CRD is Established and its resource is actually served.
  local i crd plural group version
  for f in "$CLUSTER_SCRIPT_DIR"/crds/json/*.json; do
    crd="$(tr -d ' \n' <"$f" | grep -o '"metadata":{"name":"[^"]*"' | sed 's/.*"name":"//; s/"$//')"
    plural="${crd%%.*}"
    group="${crd#*.}"
    version="$(tr -d ' \n' <"$f" | grep -o '"versions":\[{"name":"[^"]*"' | sed 's/.*"name":"//; s/"$//')"
    for ((i = 0; i < 150; i++)); do
      if api_curl "$(api_url)/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$crd" 2>/dev/null |
        tr -d ' \n' | grep -q '"type":"Established","status":"True"' &&
        [[ "$(api_curl -o /dev/null -w '%{http_code}' "$(api_url)/apis/$group/$version/$plural?limit=1")" == 200 ]]; then
        break
      fi
      sleep 0.2
    done
    ((i < 150)) || die "CRD $crd not Established after 30s"
  done
  log "CRDs established"
}
