#!/usr/bin/env bash
# compare.sh CA_SRC [CA_CORE_SRC]: builds, from one Cluster Autoscaler tree,
# upstream's own in-tree provider (go build -tags <p>) and ours (make ca),
# linked the same way (CGO_ENABLED=0 -trimpath -ldflags '-s -w'), runs each
# against our simulated cloud (--simulate --simulate-cloud-address) and a
# real Kubernetes API server, and prints one markdown table per provider:
# binary size, start to CA's first loop, start to a ready /health-check,
# VmRSS after COMPARE_LOOPS loops, and cloud calls per unchanged loop.
#
#   make ca-compare CA_SRC=<tree> [CA_CORE_SRC=<core>] [COMPARE_PROVIDERS="vultr exoscale"]
#
# It runs itself under hack/apiserver/run.sh. Binaries go to
# _out/compare/{ours,upstream}-<p>; COMPARE_BUILD=0 reuses them. Upstream's
# Vultr and Exoscale have no endpoint setting: they run with HTTPS_PROXY and
# HTTP_PROXY at a closed loopback port, so their cloud calls fail on this
# machine (Go sends no loopback traffic through a proxy, so the API server
# is still reached), and the table says so. Every wait is bounded.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/_out/compare"
providers=${COMPARE_PROVIDERS:-vultr volcengine exoscale}
loops=${COMPARE_LOOPS:-100}
scan=${COMPARE_SCAN_INTERVAL:-1s}
wait_s=${COMPARE_WAIT:-300}
cloud_addr=${COMPARE_CLOUD_ADDRESS:-127.0.0.1:18191}
sim_metrics=${COMPARE_SIM_METRICS:-127.0.0.1:18192}
ca_addr=${COMPARE_CA_ADDRESS:-127.0.0.1:18193}
log() { echo "compare: $*" >&2; }

if [ -z "${KUBECONFIG:-}" ]; then
	src=$(cd "${1:?usage: compare.sh CA_SRC [CA_CORE_SRC]}" && pwd)
	core=${2:-}
	if [ -n "$core" ]; then core=$(cd "$core" && pwd); fi
	mkdir -p "$out"
	if [ "${COMPARE_BUILD:-1}" != 0 ]; then
		# Upstream's build: a copy of the tree, with the core replaced by
		# CA_CORE_SRC where given (the module proxy does not serve it here).
		rm -rf "$out/upstream-src"
		cp -a "$src" "$out/upstream-src"
		if [ -n "$core" ]; then
			(cd "$out/upstream-src" && go mod edit -replace "sigs.k8s.io/cluster-autoscaler=$core")
		fi
		for p in $providers; do
			log "building upstream's $p"
			(cd "$out/upstream-src" && CGO_ENABLED=0 go build -trimpath -tags "$p" -ldflags '-s -w' -o "$out/upstream-$p" .)
			log "building ours ($p)"
			make -C "$root" --no-print-directory ca CA_SRC="$src" CA_CORE_SRC="$core" PROVIDER="$p" CA_BIN="_out/compare/ours-$p" >&2
		done
	fi
	if [ ! -x "$root/bin/cap-all" ] || [ "${COMPARE_BUILD:-1}" != 0 ]; then
		make -C "$root" --no-print-directory build PROVIDER=all BIN=bin/cap-all >&2
	fi
	tree=$(basename "$src")
	COMPARE_TREE=$tree exec "$root/hack/apiserver/run.sh" "$0"
fi

# --- under run.sh: measure ---

# shellcheck source=hack/intree/nodes.sh
. "$root/hack/intree/nodes.sh"

work=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

now_ms() { date +%s%3N; }
state() { curl -sf --max-time 5 "http://$sim_metrics/simulate/state"; }
# cloud_calls: every request the simulated cloud received so far (requests
# is the state's last field; its keys hold braces, as in {id}).
cloud_calls() { state | sed -n 's/.*"requests":{//p' | grep -o '":[0-9]*' | tr -d '":' | awk '{s += $1} END {print s + 0}'; }
ca_metric() { curl -sf --max-time 5 "http://$ca_addr/metrics" | grep "^$1" || true; }
# loops: CA's finished main loops (its own histogram of the main function).
loops_done() { ca_metric 'cluster_autoscaler_function_duration_seconds_count{function="main"}' | awk '{print int($2)}' | head -1; }
# ours_calls: our provider's cloud requests, from its counters in CA's registry.
ours_calls() { ca_metric 'cluster_autoscaler_provider_cloud_requests_total' | awk '{s += $NF} END {print s + 0}'; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# start_sim P WHO: a fresh simulated cloud of P, which accepts the
# credentials in creds, its Nodes registered by hand.
start_sim() {
	local p=$1
	case "$p" in
	vultr) creds=(VULTR_API_KEY=sim) ;;
	volcengine) creds=(ACCESS_KEY=AKLTsim SECRET_KEY=sim) ;;
	exoscale) creds=(EXOSCALE_API_KEY=EXOsim000000000000000000 EXOSCALE_API_SECRET=sim) ;;
	esac
	kubectl delete nodes --all --wait=false >/dev/null 2>&1 || true
	env "${creds[@]}" "$root/bin/cap-all" --cloud-provider="$p" --simulate --simulate-cloud-address="$cloud_addr" \
		--address=127.0.0.1:0 --metrics-address="$sim_metrics" >"$work/sim-$p-$2.log" 2>&1 &
	sim_pid=$!
	pids+=("$sim_pid")
	for _ in $(seq 1 300); do state >/dev/null 2>&1 && break; sleep 0.1; done
	state >/dev/null || { log "the simulated $p cloud did not start"; tail -20 "$work/sim-$p-$2.log" >&2; exit 1; }
	register_nodes "$p" "$(state)" >/dev/null
}

# run_one P WHO: starts CA WHO (ours or upstream) of P and fills the m_*
# variables: first loop and ready health endpoint (ms from exec), RSS after
# the loops, cloud calls per loop at the cloud and (ours) in CA's metrics,
# and loop errors.
run_one() {
	local p=$1 who=$2 bin="$out/$2-$1" env_args=() args=() creds=() t0 pid n c0 c1 o0 o1 l0 l1 cluster api
	start_sim "$p" "$who"
	env_args=("${creds[@]}")
	args=(--cloud-provider="$p" --kubeconfig="$KUBECONFIG" --leader-elect=false --address="$ca_addr"
		--scan-interval="$scan" --scale-down-enabled=false --v=2)
	case "$p/$who" in
	vultr/*)
		cluster=$(sed -n 's/.*VKE cluster \([0-9a-f-]*\) .*/\1/p' "$work/sim-$p-$who.log" | head -1)
		api=
		if [ "$who" = ours ]; then api=", \"api_url\": \"http://$cloud_addr\""; fi
		echo "{\"cluster_id\": \"$cluster\", \"token\": \"sim\"$api}" >"$work/cc"
		args+=(--cloud-config="$work/cc")
		;;
	volcengine/*)
		env_args+=(REGION_ID=cn-beijing)
		args+=(--nodes=1:10:scg-sim-general)
		if [ "$who" = ours ]; then
			printf '[Global]\nscheme = http\n' >"$work/cc"
			env_args+=(ENDPOINT="$cloud_addr")
			args+=(--cloud-config="$work/cc")
		else
			# Upstream's reads its settings from the environment only, but
			# stops at start-up without a --cloud-config path.
			: >"$work/cc"
			env_args+=(ENDPOINT="http://$cloud_addr")
			args+=(--cloud-config="$work/cc")
		fi
		;;
	exoscale/*)
		env_args+=(EXOSCALE_ZONE=ch-gva-2 EXOSCALE_SKS_CLUSTER=demo)
		if [ "$who" = ours ]; then env_args+=(EXOSCALE_API_ENDPOINT="http://$cloud_addr/v2"); fi
		;;
	esac
	# Upstream's Vultr and Exoscale cannot be pointed here: a closed loopback
	# proxy keeps their calls on this machine.
	case "$p/$who" in vultr/upstream | exoscale/upstream) env_args+=(HTTPS_PROXY=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9) ;; esac
	t0=$(now_ms)
	env "${env_args[@]}" "$bin" "${args[@]}" >"$work/ca-$p-$who.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	m_first=- m_ready=- m_rss=- m_calls=- m_ours=- m_loops=0
	local deadline=$((SECONDS + wait_s))
	while ((SECONDS < deadline)) && kill -0 "$pid" 2>/dev/null; do
		if [ "$m_ready" = - ] && curl -sf --max-time 1 "http://$ca_addr/health-check" >/dev/null 2>&1; then m_ready=$(($(now_ms) - t0)); fi
		n=$(loops_done)
		if [ "$m_first" = - ] && [ "${n:-0}" -ge 1 ]; then m_first=$(($(now_ms) - t0)); fi
		[ "$m_first" != - ] && [ "$m_ready" != - ] && break
		sleep 0.05
	done
	if [ "$m_first" = - ]; then
		log "$who $p: no finished loop within ${wait_s}s"
		m_err=$(grep -c '^E' "$work/ca-$p-$who.log" || true)
		kill "$pid" 2>/dev/null || true
		kill "$sim_pid" 2>/dev/null || true
		return
	fi
	# Ten loops to settle, then count over the loops that follow: nothing
	# changes in the cloud or the cluster, so every loop is an unchanged one.
	for _ in $(seq 1 "$wait_s"); do [ "$(loops_done)" -ge 10 ] && break; sleep 0.2; done
	l0=$(loops_done) c0=$(cloud_calls) o0=$(ours_calls)
	for _ in $(seq 1 $((wait_s * 5))); do [ "$(loops_done)" -ge "$loops" ] && break; sleep 0.2; done
	l1=$(loops_done) c1=$(cloud_calls) o1=$(ours_calls)
	m_loops=$l1
	m_rss=$(rss_kb "$pid")
	if ((l1 > l0)); then
		m_calls=$(awk -v c=$((c1 - c0)) -v l=$((l1 - l0)) 'BEGIN {printf "%.2f", c / l}')
		if [ "$who" = ours ]; then m_ours=$(awk -v c=$((o1 - o0)) -v l=$((l1 - l0)) 'BEGIN {printf "%.2f", c / l}'); fi
	fi
	m_err=$(grep -c '^E' "$work/ca-$p-$who.log" || true)
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	kill "$sim_pid" 2>/dev/null || true
	wait "$sim_pid" 2>/dev/null || true
}

# pct OURS THEIRS: the difference of ours from upstream's, in %.
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%+.1f %%", (a - b) * 100 / b }'; }

echo "CA tree: ${COMPARE_TREE:-?}; $(date -u +%F); scan interval $scan; $loops loops; $(nproc) CPUs"
for p in $providers; do
	declare -A r=()
	for who in ours upstream; do
		run_one "$p" "$who"
		r[$who.size]=$(stat -c %s "$out/$who-$p")
		r[$who.first]=$m_first r[$who.ready]=$m_ready r[$who.rss]=$m_rss r[$who.calls]=$m_calls
		r[$who.ours]=$m_ours r[$who.err]=$m_err r[$who.loops]=$m_loops
		cp "$work/ca-$p-$who.log" "$out/ca-$p-$who.log"
	done
	echo
	echo "#### $p"
	echo
	echo "| | ours | upstream's | ours vs upstream's |"
	echo "|---|---:|---:|---:|"
	echo "| binary size (bytes) | ${r[ours.size]} | ${r[upstream.size]} | $(pct "${r[ours.size]}" "${r[upstream.size]}") |"
	echo "| start to first loop (ms) | ${r[ours.first]} | ${r[upstream.first]} | $(pct "${r[ours.first]}" "${r[upstream.first]}") |"
	echo "| start to ready /health-check (ms) | ${r[ours.ready]} | ${r[upstream.ready]} | $(pct "${r[ours.ready]}" "${r[upstream.ready]}") |"
	echo "| VmRSS after ${r[ours.loops]} / ${r[upstream.loops]} loops (kB) | ${r[ours.rss]} | ${r[upstream.rss]} | $(pct "${r[ours.rss]}" "${r[upstream.rss]}") |"
	echo "| cloud calls per unchanged loop, at the simulated cloud | ${r[ours.calls]} | ${r[upstream.calls]} | |"
	echo "| cloud calls per unchanged loop, our metrics in CA's registry | ${r[ours.ours]} | | |"
	echo "| error lines in CA's log | ${r[ours.err]} | ${r[upstream.err]} | |"
	unset r
done
