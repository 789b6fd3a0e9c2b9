# shellcheck shell=bash
# Sourced by the in-tree scripts that run CA against the simulated cloud.
# No kubelets run there, so Nodes are registered by hand.

# register_nodes PROVIDER STATE_JSON [UNREADY]: one Node per instance in the
# simulated cloud's /simulate/state, named node-0, node-1, ..., with its
# providerID, as a kubelet would register it; the node named UNREADY
# registers NotReady. Prints how many it registered.
register_nodes() {
	local p=$1 state=$2 unready=${3:-} i=0 id name ready reason now
	while read -r id; do
		[ -n "$id" ] || continue
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
		kubectl taint node "$name" node.kubernetes.io/not-ready:NoSchedule- >/dev/null </dev/null
		ready=True reason=KubeletReady
		if [ "$name" = "$unready" ]; then ready=False reason=KubeletNotReady; fi
		now=$(date -u +%FT%TZ)
		kubectl patch node "$name" --subresource=status --type=merge -p '{"status":{"capacity":{"cpu":"2","memory":"4Gi","pods":"110"},"allocatable":{"cpu":"2","memory":"4Gi","pods":"110"},"conditions":[{"type":"Ready","status":"'"$ready"'","reason":"'"$reason"'","lastHeartbeatTime":"'"$now"'","lastTransitionTime":"'"$now"'"}]}}' >/dev/null </dev/null
	done < <(grep -o "\"providerID\":\"$p://[^\"]*\"" <<<"$state" | cut -d'"' -f4)
	echo "$i"
}
