#!/usr/bin/env bash
# simulate-e2e.sh CA_BINARY [PROVIDER]: an in-tree Cluster Autoscaler (make
# ca PROVIDER=<p>) against the simulated cloud of this repository's binary
# (--simulate --simulate-cloud-address) and a real Kubernetes API server;
# run it under hack/apiserver/run.sh, which sets KUBECONFIG:
#
#   hack/apiserver/run.sh hack/intree/simulate-e2e.sh bin/ca-vultr vultr
#
# PROVIDER is vultr (the default), volcengine or exoscale; the in-tree CA
# reaches the simulated cloud through its endpoint setting (docs/intree.md).
# Nodes are registered by hand (no kubelets): one Ready Node per instance
# of the simulated cloud. The check: CA scales one group down to the
# minimum its --nodes spec gives, then seven pending pods of 1.5 CPU, more
# than the nodes left hold, make it scale a group up, and no group leaves
# its bounds. The group scaled down has no per-group settings (the demo's
# first group asks for a 5m scale-down-unneeded-time, which CA honours):
#
#   vultr       the static pool, 2 empty nodes, --nodes=1:4:static: 2 -> 1
#   exoscale    the batch instance pool, 1 empty node, --nodes=0:4:batch: 1 -> 0
#   volcengine  the demo has no such group: its general group's second node
#               registers NotReady and CA removes it after
#               --scale-down-unready-time (15s), which no group overrides: 2 -> 1
#
# CAP_BINARY names our binary (default: go run .). Exits 1 when CA does not
# do either within E2E_WAIT seconds (default 120). E2E_LOGS names a
# directory to keep the logs of CA and the simulated cloud in; CA_V is CA's
# --v (default 2).
set -euo pipefail

ca=${1:?usage: simulate-e2e.sh CA_BINARY [vultr|volcengine|exoscale] (under hack/apiserver/run.sh)}
provider=${2:-vultr}
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

# What differs by provider: the credentials the simulated cloud accepts
# (exported for --simulate, which signs with them), how the in-tree CA is
# pointed at it, the group scaled down and its minimum, the node that
# registers NotReady ("" for none), and the bounds every group must stay
# within, as name:min:max.
ca_env=()
ca_args=()
unready=""
case "$provider" in
vultr)
	export VULTR_API_KEY=simulated-e2e
	down=static down_to=1 bounds="general:1:5 gpu:1:3 static:1:4"
	ca_args=(--nodes=1:4:static)
	;;
volcengine)
	export ACCESS_KEY=AKLTsimulatede2e SECRET_KEY=simulated-e2e-secret
	down=general down_to=1 bounds="general:1:10" unready=node-1
	ca_env=(ACCESS_KEY="$ACCESS_KEY" SECRET_KEY="$SECRET_KEY" REGION_ID=cn-beijing ENDPOINT="$cloud_addr")
	ca_args=(--nodes=1:10:scg-sim-general --scale-down-unready-time=15s)
	;;
exoscale)
	export EXOSCALE_API_KEY=EXOsimulatede2e000000000 EXOSCALE_API_SECRET=simulated-e2e-secret
	# A nodepool without a --nodes spec gets min 1 and max the instance
	# quota (50 in the simulation); the demo's gpu nodepool starts at 0.
	down=batch down_to=0 bounds="nodepool-workers:1:50 nodepool-gpu:0:50 batch:0:4"
	ca_env=(EXOSCALE_API_KEY="$EXOSCALE_API_KEY" EXOSCALE_API_SECRET="$EXOSCALE_API_SECRET" EXOSCALE_ZONE=ch-gva-2
		EXOSCALE_SKS_CLUSTER=demo EXOSCALE_API_ENDPOINT="http://$cloud_addr/v2")
	ca_args=(--nodes=0:4:batch)
	;;
*)
	echo "simulate-e2e: provider $provider: want vultr, volcengine or exoscale" >&2
	exit 2
	;;
esac

sim_args=(--cloud-provider="$provider" --simulate --simulate-cloud-address="$cloud_addr" --address=127.0.0.1:0 --metrics-address="$metrics_addr")
if [ -n "${CAP_BINARY:-}" ]; then
	"$CAP_BINARY" "${sim_args[@]}" >"$work/sim.log" 2>&1 &
else
	(cd "$root" && go run . "${sim_args[@]}") >"$work/sim.log" 2>&1 &
fi
pids+=($!)
state() { curl -sf "http://$metrics_addr/simulate/state"; }
for _ in $(seq 1 600); do state >/dev/null 2>&1 && break; sleep 0.2; done
state >/dev/null || { log "the simulated cloud did not start:"; cat "$work/sim.log" >&2; exit 1; }
log "simulated $provider API on http://$cloud_addr"
# One Ready Node per instance, as kubelets would register them.
# shellcheck source=hack/intree/nodes.sh
. "$root/hack/intree/nodes.sh"
registered=$(register_nodes "$provider" "$(state)" "$unready")
log "registered $registered nodes${unready:+ ($unready NotReady)}"

case "$provider" in
vultr)
	cluster=$(sed -n 's/.*VKE cluster \([0-9a-f-]*\) .*/\1/p' "$work/sim.log" | head -1)
	echo "{\"cluster_id\": \"$cluster\", \"token\": \"$VULTR_API_KEY\", \"api_url\": \"http://$cloud_addr\"}" >"$work/cloud-config"
	ca_args+=(--cloud-config="$work/cloud-config")
	;;
volcengine)
	# Upstream's shape: credentials, region and endpoint in the environment;
	# the file only says the simulated cloud speaks plain HTTP.
	printf '[Global]\nscheme = http\n' >"$work/cloud-config"
	ca_args+=(--cloud-config="$work/cloud-config")
	;;
esac
env "${ca_env[@]}" "$ca" --cloud-provider="$provider" --kubeconfig="$KUBECONFIG" --leader-elect=false --address="$ca_addr" \
	--scan-interval=5s --scale-down-unneeded-time=15s --scale-down-delay-after-add=0s --scale-down-delay-after-delete=0s \
	--max-node-provision-time=15m "${ca_args[@]}" --v="${CA_V:-2}" >"$work/ca.log" 2>&1 &
pids+=($!)

# desired NAME: the simulated cloud's desired size of the group whose last
# id is NAME (its name in the cloud's console).
desired() { state | grep -o "\"ids\":\[[^]]*\"$1\"\],\"desired\":[0-9]*" | grep -o '[0-9]*$'; }
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

down_at_min() { [ "$(desired "$down")" = "$down_to" ]; }
grown() { [ "$(total)" -gt "$1" ]; }
waitfor "scale-down: group $down went to $down_to (its minimum from --nodes)" down_at_min
before=$(total)
# No controller manager makes the namespace's ServiceAccount, which pods need.
kubectl create serviceaccount default >/dev/null
for n in $(seq 1 7); do
	kubectl run "pending-$n" --image=registry.k8s.io/pause:3.10 --restart=Never --overrides='{"spec":{"containers":[{"name":"p","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"1500m"}}}]}}' >/dev/null
	kubectl patch pod "pending-$n" --subresource=status --type=merge -p '{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/5 nodes are available"}]}}' >/dev/null
done
waitfor "scale-up: the simulated cloud's desired nodes rose from $before" grown "$before"
for b in $bounds; do
	IFS=: read -r g lo hi <<<"$b"
	d=$(desired "$g")
	if [ -z "$d" ] || [ "$d" -lt "$lo" ] || [ "$d" -gt "$hi" ]; then
		log "FAIL: group $g desired ${d:-missing} outside $lo..$hi"
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
ok=""
for b in $bounds; do ok+=" ${b%%:*}=$(desired "${b%%:*}")"; done
log "ok: $provider desired$ok"
