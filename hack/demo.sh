#!/usr/bin/env bash
# make demo PROVIDER=<vultr|volcengine|exoscale>: run the provider against its
# simulated cloud, then do what CA would do through "inspect": look, scale a
# group up, delete one of its nodes, and show the tables before and after.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
PROVIDER=${PROVIDER:-vultr}
if [[ -z "$PROVIDER" || "$PROVIDER" == all ]]; then PROVIDER=vultr; fi
TAGS=${TAGS:-}
LDFLAGS=${LDFLAGS:-}
BIN=_out/demo/cluster-autoscaler-provider
LOG=_out/demo/server-$PROVIDER.log
# Longest wait, in seconds, for the fake cloud to boot the new node.
WAIT=${DEMO_WAIT:-60}

mkdir -p _out/demo
echo "== building ($PROVIDER)"
"$GO" build -tags "$TAGS" -ldflags "$LDFLAGS" -o "$BIN" .

echo "== starting: $BIN --cloud-provider=$PROVIDER --simulate"
"$BIN" --cloud-provider="$PROVIDER" --simulate --address 127.0.0.1:0 --metrics-address 127.0.0.1:0 >"$LOG" 2>"$LOG.stderr" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT

# The banner's last line means the first snapshot is served.
for _ in $(seq 1 100); do
  grep -q '^Point a Cluster Autoscaler here' "$LOG" && break
  kill -0 "$server" 2>/dev/null || { cat "$LOG" "$LOG.stderr"; echo "demo: the server exited" >&2; exit 1; }
  sleep 0.2
done
grep -q '^Point a Cluster Autoscaler here' "$LOG" || { cat "$LOG" "$LOG.stderr"; echo "demo: no banner after 20s" >&2; exit 1; }
cat "$LOG"

addr=$(sed -n 's/^Serving [^ ]* on \([^ ]*\) .*/\1/p' "$LOG")
group=$(sed -n 's/.* --scale-up \([^ ]*\)=1$/\1/p' "$LOG")
inspect() { "$BIN" inspect --address "$addr" --group "$group" "$@"; }

echo
echo "== scale-up: inspect --scale-up $group=1 (NodeGroupIncreaseSize, as CA sends it)"
inspect --scale-up "$group=1"

echo
echo "== waiting until the group has no instance creating (the fake cloud boots the new node; at most ${WAIT}s)"
# CA sees the state change through NodeGroupNodes; inspect asks the same.
start=$SECONDS
deadline=$((start + WAIT))
while inspect -o json | grep -q '"state": "creating"'; do
  if ((SECONDS >= deadline)); then
    inspect
    echo "demo: an instance is still creating after ${WAIT}s (server log: $LOG)" >&2
    exit 1
  fi
  sleep 1
done
echo "== $((SECONDS - start))s later: no instance creating any more"
inspect

victim=$(inspect -o json | awk '/"providerID"/ {id=$2} /"state": "running"/ {print id; exit}' | tr -d '",')
if [[ -z "$victim" ]]; then echo "demo: no running instance to delete" >&2; exit 1; fi
echo
echo "== deletion: inspect --delete $victim (NodeGroupForNode, then NodeGroupDeleteNodes)"
inspect --delete "$victim"

echo
echo "== done; the demo server has stopped (its log: $LOG)."
echo "To explore on your own: $BIN --cloud-provider=$PROVIDER --simulate, then $BIN inspect in another terminal."
