#!/usr/bin/env bash
# hack/apiserver/run.sh COMMAND [ARG...]: start a throwaway Kubernetes API
# server on loopback (upstream kube-apiserver, built from this directory's
# module, over etcd), run COMMAND with KUBECONFIG pointing at it as an admin
# and a kubectl of the server's release first on PATH, then stop both servers
# and remove their files. Exits with COMMAND's status.
#
#   CAP_MIGRATION_DRY_RUN=1 hack/apiserver/run.sh go test -C test -count=1 -run TestServerSideDryRunOverInTree ./examples/
#
# Needs go, etcd (Debian: etcd-server), openssl and curl. kube-apiserver and
# kubectl are built once per module content into bin/tools.
set -euo pipefail

if (($# == 0)); then
  echo "usage: hack/apiserver/run.sh COMMAND [ARG...] (for example: hack/apiserver/run.sh kubectl get --raw /readyz)" >&2
  exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
GO=${GO:-go}
ETCD=${ETCD:-etcd}
# Longest wait, in seconds, for each server to answer ready.
WAIT=${APISERVER_WAIT:-180}
if ! [[ "$WAIT" =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: APISERVER_WAIT=$WAIT is not a number of seconds; set it to a positive integer such as 180" >&2
  exit 2
fi
for tool in "$GO" "$ETCD" openssl curl; do
  if ! command -v "$tool" >/dev/null; then
    echo "run.sh: $tool not found; install it (Debian: apt-get install -y etcd-server openssl curl; go from go.dev)" >&2
    exit 2
  fi
done

log() { echo "run.sh: $*" >&2; }

# --- build (cached by the module's content) ---

version=$("$GO" -C "$here" list -m -f '{{.Version}}' k8s.io/kubernetes)
if [[ ! "$version" =~ ^v1\.([0-9]+)\.[0-9]+$ ]]; then
  log "hack/apiserver/go.mod requires k8s.io/kubernetes $version; require a release such as v1.37.2"
  exit 2
fi
minor=${BASH_REMATCH[1]}
sum=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)
# kube-apiserver and a kubectl of the same release, both from this module.
tools="$root/bin/tools/kubernetes-$version-$sum"
if [[ ! -x "$tools/kube-apiserver" || ! -x "$tools/kubectl" ]]; then
  log "building kube-apiserver and kubectl $version into $tools (cold: 10 to 20 minutes on 2 cores)"
  start=$SECONDS
  building="$tools.tmp.$$"
  mkdir -p "$building"
  pkg=k8s.io/component-base/version
  ldflags="-X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  if ! "$GO" -C "$here" build -ldflags "$ldflags" -o "$building/kube-apiserver" . ||
    ! "$GO" -C "$here" build -ldflags "$ldflags" -o "$building/kubectl" k8s.io/kubernetes/cmd/kubectl; then
    rm -rf "$building"
    log "building kube-apiserver or kubectl failed (go build's error is above)"
    exit 1
  fi
  # Another run may have finished the same build first; either copy is good.
  mv -T "$building" "$tools" 2>/dev/null || rm -rf "$building"
  log "built in $((SECONDS - start))s"
fi
bin="$tools/kube-apiserver"

# --- a temporary directory, stopped and removed on every exit ---

tmp=$(mktemp -d "${TMPDIR:-/tmp}/apiserver.XXXXXX")
pids=()
# shellcheck disable=SC2317 # run by the EXIT trap
stop_all() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# free_port [AVOID] prints a loopback port nothing listens on, other than
# AVOID. A server that still loses its port to another process exits, and its
# start is tried again with new ports.
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 30000))
    if [[ "$p" != "${1:-}" ]] && ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  log "no free loopback port found"
  exit 1
}

# await PID CHECK...: poll CHECK every 0.2 s until it succeeds. Returns 1 when
# PID exits first and 2 after WAIT seconds.
await() {
  local pid=$1 deadline=$((SECONDS + WAIT))
  shift
  until "$@" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || return 1
    ((SECONDS < deadline)) || return 2
    sleep 0.2
  done
}

# fail NAME LOG WHY: report why a server did not start, with its log's end.
fail() {
  local name=$1 logfile=$2 why=$3
  log "$name $why; the end of its log ($logfile):"
  tail -n 30 "$logfile" >&2 || true
  exit 1
}

start_etcd() {
  local attempt client peer
  for attempt in 1 2 3; do
    client=$(free_port)
    peer=$(free_port "$client")
    "$ETCD" --name default --data-dir "$tmp/etcd" \
      --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
      --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
      --initial-cluster "default=http://127.0.0.1:$peer" \
      --unsafe-no-fsync --logger zap --log-outputs stderr >"$tmp/etcd.log" 2>&1 &
    pids+=($!)
    if await "$!" curl -fs "http://127.0.0.1:$client/health"; then
      etcd_url="http://127.0.0.1:$client"
      return
    elif (($? == 2)); then
      fail etcd "$tmp/etcd.log" "not healthy after ${WAIT}s"
    fi
    wait "${pids[-1]}" 2>/dev/null || true
    unset 'pids[-1]'
    grep -q 'address already in use' "$tmp/etcd.log" || fail etcd "$tmp/etcd.log" "exited"
    rm -rf "$tmp/etcd"
    log "etcd lost a port to another process (attempt $attempt), trying other ports"
  done
  fail etcd "$tmp/etcd.log" "found no free ports in 3 attempts"
}

start_apiserver() {
  local attempt port
  for attempt in 1 2 3; do
    port=$(free_port)
    "$bin" --etcd-servers "$etcd_url" \
      --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port" \
      --endpoint-reconciler-type none --cert-dir "$tmp/certs" \
      --anonymous-auth=false --token-auth-file "$tmp/tokens.csv" --authorization-mode AlwaysAllow \
      --service-account-issuer https://kubernetes.default.svc \
      --service-account-key-file "$tmp/sa.key" --service-account-signing-key-file "$tmp/sa.key" \
      --service-cluster-ip-range 10.0.0.0/24 \
      --profiling=false >"$tmp/kube-apiserver.log" 2>&1 &
    pids+=($!)
    if await "$!" curl -fs --cacert "$tmp/certs/apiserver.crt" -H "@$tmp/auth-header" "https://127.0.0.1:$port/readyz"; then
      server_url="https://127.0.0.1:$port"
      return
    elif (($? == 2)); then
      fail kube-apiserver "$tmp/kube-apiserver.log" "not ready after ${WAIT}s"
    fi
    wait "${pids[-1]}" 2>/dev/null || true
    unset 'pids[-1]'
    grep -q 'address already in use' "$tmp/kube-apiserver.log" || fail kube-apiserver "$tmp/kube-apiserver.log" "exited"
    log "kube-apiserver lost its port to another process (attempt $attempt), trying another port"
  done
  fail kube-apiserver "$tmp/kube-apiserver.log" "found no free port in 3 attempts"
}

# --- credentials: one admin token, a service-account signing key ---

umask 077
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
echo "$token,admin,admin,system:masters" >"$tmp/tokens.csv"
# curl reads the header from a file, so the token is in no process list.
echo "Authorization: Bearer $token" >"$tmp/auth-header"
openssl ecparam -name prime256v1 -genkey -noout -out "$tmp/sa.key" 2>/dev/null

start=$SECONDS
start_etcd
log "etcd $("$ETCD" --version | awk 'NR == 1 { print $3 }') healthy at $etcd_url"
start_apiserver
log "kube-apiserver $version ready at $server_url after $((SECONDS - start))s (logs in $tmp)"

cat >"$tmp/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: apiserver
  cluster:
    server: $server_url
    certificate-authority: $tmp/certs/apiserver.crt
users:
- name: admin
  user:
    token: $token
contexts:
- name: apiserver
  context:
    cluster: apiserver
    user: admin
current-context: apiserver
EOF

log "running: $*"
# In the background, so a signal to this script stops the command and the
# servers at once; stdin stays the script's.
PATH="$tools:$PATH" KUBECONFIG="$tmp/kubeconfig" "$@" <&0 &
pids+=($!)
set +e
wait "$!"
rc=$?
set -e
log "command exited $rc; stopping kube-apiserver and etcd"
exit "$rc"
