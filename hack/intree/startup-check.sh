#!/usr/bin/env bash
# startup-check.sh BINARY PROVIDER [GENERATION]: checks a cluster-autoscaler
# built by make ca PROVIDER=<p> is ours:
#   - started with upstream's documented configuration of PROVIDER (dummy
#     credentials, a kubeconfig that reaches nothing), its start-up log has
#     our provider's line (CA has no --version flag; this line is how the
#     binary tells itself apart). No cloud call is made: building the
#     provider never calls the cloud, and CA then waits for the Kubernetes API;
#   - --help offers --cloud-provider=PROVIDER only;
#   - its build info lists our modules and, for GENERATION split-core, the
#     core module sigs.k8s.io/cluster-autoscaler;
#   - upstream's own package of PROVIDER is not linked (no function of
#     k8s.io/autoscaler/cluster-autoscaler/cloudprovider/PROVIDER in it).
# GENERATION defaults to the one make ca-src recorded in _out/ca-src.env.
set -euo pipefail

bin=${1:?usage: startup-check.sh BINARY PROVIDER [1.36|split-core]}
p=${2:?usage: startup-check.sh BINARY PROVIDER [1.36|split-core]}
generation=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "$generation" ] && [ -f "$root/_out/ca-src.env" ]; then
	generation=$(sed -n 's/^CA_GENERATION=//p' "$root/_out/ca-src.env")
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cat >"$dir/kubeconfig" <<'KC'
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: none, user: {}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
KC
args=(--cloud-provider="$p" --kubeconfig="$dir/kubeconfig" --leader-elect=false --v=2)
envs=()
case "$p" in
vultr)
	echo '{"cluster_id": "6b8b7c8e-7314-4d17-bb0c-fcc9777230fa", "token": "dummy"}' >"$dir/cloud-config"
	args+=(--cloud-config="$dir/cloud-config")
	;;
volcengine)
	envs=(ACCESS_KEY=dummy SECRET_KEY=dummy REGION_ID=cn-shanghai ENDPOINT=open.volcengineapi.com)
	args+=(--nodes=1:10:scg-example)
	;;
exoscale)
	envs=(EXOSCALE_API_KEY=EXOdummy EXOSCALE_API_SECRET=dummy EXOSCALE_ZONE=de-fra-1)
	;;
*)
	echo "error: provider $p: want vultr, volcengine or exoscale" >&2
	exit 2
	;;
esac
# CA keeps waiting for the Kubernetes API; timeout ends it.
env "${envs[@]}" timeout 15 "$bin" "${args[@]}" >"$dir/log" 2>&1 || true
line=$(grep "Cloud provider built in-tree from cluster-autoscaler-provider" "$dir/log" | grep "provider=\"$p\"" || true)
if [ -z "$line" ]; then
	echo "FAIL: $bin --cloud-provider=$p did not log our provider's start-up line; its log:" >&2
	cat "$dir/log" >&2
	exit 1
fi

offered=$("$bin" --help 2>&1 | sed -n 's/.*--cloud-provider string.*Available values: \(\[[^]]*\]\).*/\1/p' || true)
if [ "$offered" != "[$p]" ]; then
	echo "FAIL: $bin --help offers --cloud-provider values ${offered:-none}, want [$p]" >&2
	exit 1
fi
info=$(go version -m "$bin")
want=(github.com/ca-providers/cluster-autoscaler-provider github.com/ca-providers/cluster-autoscaler-provider/intree)
if [ "$generation" = split-core ]; then
	want+=(sigs.k8s.io/cluster-autoscaler)
fi
for m in "${want[@]}"; do
	if ! grep -qP "^\tdep\t\Q$m\E\t" <<<"$info"; then
		echo "FAIL: $bin's build info does not list module $m:" >&2
		echo "$info" | sed -n '1,12p' >&2
		exit 1
	fi
done
upstream="k8s.io/autoscaler/cluster-autoscaler/cloudprovider/$p."
if grep -aqF "$upstream" "$bin"; then
	echo "FAIL: $bin links upstream's own package ${upstream%.}" >&2
	exit 1
fi
echo "ok: $bin --cloud-provider=$p is ours (${generation:-unknown} generation; --help offers $offered; build info lists ${want[*]}; ${upstream%.} not linked): ${line#*] }"
