#!/usr/bin/env bash
# simulate-e2e.sh CA_BINARY: an in-tree Cluster Autoscaler (make ca
# PROVIDER=vultr) against the simulated Vultr API of this repository's
# binary (--simulate --simulate-cloud-address) and a real Kubernetes API
# server; run it under hack/apiserver/run.sh, which sets KUBECONFIG:
#
#   hack/apiserver/run.sh hack/intree/simulate-e2e.sh bin/cluster-autoscaler
#
# Nodes are registered by hand (no kubelets): one Ready Node per instance
# of the simulated cloud. CA's own --nodes=1:4:static brings in the demo's
# pool that is not autoscaled (the general pool's labels ask for a 5m
# scale-down-unneeded-time, which CA honours). The check: CA deletes one of
# the two empty nodes of the static pool (its minimum is 1), then seven
# pending pods of 1.5 CPU, more than the four nodes left hold, make it scale
# a pool up, and no pool leaves its bounds. CAP_BINARY names our binary
# (default: go run .). Exits 1 when CA does not do either within E2E_WAIT
# seconds (default 120). E2E_LOGS names a directory to keep the logs of CA
# and the simulated cloud in; CA_V is CA's --v (default 2).
set -euo pipefail

ca=${1:?usage: simulate-e2e.sh CA_BINARY (under hack/apiserver/run.sh)}
: "${KUBECONFIG:?run it under hack/apiserver/run.sh, which sets KUBECONFIG}"
root=$(cd "$(dirname "$0")/../.." && pwd)
cloud_addr=${SIM_CLOUD_ADDRESS:-127.0.0.1:8089}
metrics_addr=${SIM_METRICS_ADDRESS:-127.0.0.1:8097}
ca_addr=${CA_ADDRESS:-127.0.0.1:18085}
wait_s=${E2E_WAIT:-120}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "${E2E_LOGS:-}" ]; then
		mkdir -p "$E2E_LOGS" && cp "$work"/*.log "$E2E_LOGS"/
	fi
	rm -rf "$work"
}
trap cleanup EXIT
log() { echo "simulate-e2e: $*" >&2; }

# The simulated cloud, with the credential the in-tree CA will send.
export VULTR_API_KEY=simulated-e2e
if [ -n "${CAP_BINARY:-}" ]; then
	"$CAP_BINARY" --cloud-provider=vultr --simulate --simulate-cloud-address="$cloud_addr" --address=127.0.0.1:0 --metrics-address="$metrics_addr" >"$work/sim.log" 2>&1 &
else
	(cd "$root" && go run . --cloud-provider=vultr --simulate --simulate-cloud-address="$cloud_addr" --address=127.0.0.1:0 --metrics-address="$metrics_addr") >"$work/sim.log" 2>&1 &
fi
pids+=($!)
state() { curl -sf "http://$metrics_addr/simulate/state"; }
for _ in $(seq 1 600); do state >/dev/null 2>&1 && break; sleep 0.2; done
state >/dev/null || { log "the simulated cloud did not start:"; cat "$work/sim.log" >&2; exit 1; }
cluster=$(sed -n 's/.*VKE cluster \([0-9a-f-]*\) .*/\1/p' "$work/sim.log" | head -1)
log "simulated Vultr API on http://$cloud_addr, VKE cluster $cluster"

# One Ready Node per instance, as kubelets would register them.
i=0
for id in $(state | grep -o '"providerID":"vultr://[^"]*"' | cut -d'"' -f4); do
	name=node-$i
	i=$((i + 1))
	kubectl create -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata: {name: $name, labels: {kubernetes.io/hostname: $name, kubernetes.io/os: linux, kubernetes.io/arch: amd64}}
spec: {providerID: "$id"}
NODE
	# The API server's TaintNodesByCondition admission taints a new node
	# not-ready; the node lifecycle controller would lift it once Ready.
	kubectl taint node "$name" node.kubernetes.io/not-ready:NoSchedule- >/dev/null
	kubectl patch node "$name" --subresource=status --type=merge -p '{"status":{"capacity":{"cpu":"2","memory":"4Gi","pods":"110"},"allocatable":{"cpu":"2","memory":"4Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","lastHeartbeatTime":"'"$(date -u +%FT%TZ)"'","lastTransitionTime":"'"$(date -u +%FT%TZ)"'"}]}}' >/dev/null
done
log "registered $i nodes"

echo "{\"cluster_id\": \"$cluster\", \"token\": \"$VULTR_API_KEY\", \"api_url\": \"http://$cloud_addr\"}" >"$work/cloud-config"
"$ca" --cloud-provider=vultr --cloud-config="$work/cloud-config" --kubeconfig="$KUBECONFIG" --leader-elect=false --address="$ca_addr" \
	--scan-interval=5s --scale-down-unneeded-time=15s --scale-down-delay-after-add=0s --scale-down-delay-after-delete=0s \
	--max-node-provision-time=15m --nodes=1:4:static --v="${CA_V:-2}" >"$work/ca.log" 2>&1 &
pids+=($!)

desired() { state | grep -o "\"ids\":\[\"[^\"]*\",\"$1\"\],\"desired\":[0-9]*" | grep -o '[0-9]*$'; }
total() { state | grep -o '"desired":[0-9]*' | cut -d: -f2 | awk '{s += $1} END {print s}'; }
# waitfor WHAT CHECK [ARG...]: runs CHECK every second until it succeeds.
waitfor() {
	local what=$1
	shift
	for _ in $(seq 1 "$wait_s"); do
		if "$@"; then log "$what"; return 0; fi
		sleep 1
	done
	log "FAIL: $what did not happen within ${wait_s}s; CA's log:"
	grep -v "^I.*reflector\|^W.*reflector" "$work/ca.log" | tail -40 >&2
	exit 1
}

static_at_min() { [ "$(desired static)" = 1 ]; }
grown() { [ "$(total)" -gt "$1" ]; }
waitfor "scale-down: the static pool went from 2 to 1 (its minimum from --nodes)" static_at_min
before=$(total)
# No controller manager makes the namespace's ServiceAccount, which pods need.
kubectl create serviceaccount default >/dev/null
for n in $(seq 1 7); do
	kubectl run "pending-$n" --image=registry.k8s.io/pause:3.10 --restart=Never --overrides='{"spec":{"containers":[{"name":"p","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"1500m"}}}]}}' >/dev/null
	kubectl patch pod "pending-$n" --subresource=status --type=merge -p '{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/5 nodes are available"}]}}' >/dev/null
done
waitfor "scale-up: the simulated cloud's desired nodes rose from $before" grown "$before"
for bounds in general:5 gpu:3 static:4; do
	g=${bounds%:*} max=${bounds#*:}
	d=$(desired "$g")
	if [ "$d" -lt 1 ] || [ "$d" -gt "$max" ]; then
		log "FAIL: pool $g desired $d outside 1..$max"
		exit 1
	fi
done
# Our metrics are on CA's own port, in CA's registry: no second port.
ours=$(curl -sf "http://$ca_addr/metrics" | grep '^cluster_autoscaler_provider_mutations_total' || true)
if [ -z "$ours" ]; then
	log "FAIL: CA's /metrics on $ca_addr has no cluster_autoscaler_provider_mutations_total"
	exit 1
fi
log "CA's /metrics on $ca_addr carries ours:"
while read -r line; do echo "  $line" >&2; done <<<"$ours"
log "CA's lines about our provider:"
grep -E 'Cloud provider built in-tree|Managing node group|Node group changed' "$work/ca.log" | sed 's/^/  /' >&2
log "ok: desired general $(desired general), gpu $(desired gpu), static $(desired static)"
