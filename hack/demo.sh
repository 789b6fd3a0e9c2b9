#!/usr/bin/env bash
# make demo PROVIDER=<vultr|volcengine|exoscale>: run the provider against its
# simulated cloud, then do what CA would do through "inspect": look, scale a
# group up, wait until the new node runs, delete one of the group's older
# nodes, and show the tables before and after.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
PROVIDER=${PROVIDER:-vultr}
if [[ -z "$PROVIDER" || "$PROVIDER" == all ]]; then PROVIDER=vultr; fi
TAGS=${TAGS:-}
LDFLAGS=${LDFLAGS:-}
# DEMO_OUT is where the binary and the server's log go; DEMO_BIN names a
# binary built already (the build is then skipped).
OUT=${DEMO_OUT:-_out/demo}
BIN=${DEMO_BIN:-$OUT/cluster-autoscaler-provider}
LOG=$OUT/server-$PROVIDER.log
# Longest wait, in seconds, for the fake cloud to boot the new node.
WAIT=${DEMO_WAIT:-60}

mkdir -p "$OUT"
if [[ -z "${DEMO_BIN:-}" ]]; then
  echo "== building ($PROVIDER)"
  "$GO" build -tags "$TAGS" -ldflags "$LDFLAGS" -o "$BIN" .
fi

echo "== starting: $BIN --cloud-provider=$PROVIDER --simulate"
# Emptied here, not only by the redirection below, which runs in the
# background: the wait for the banner must not read an earlier run's log.
: >"$LOG"
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
# states prints "<providerID> <state>" for each instance of the group, as
# CA sees them through NodeGroupNodes.
states() { inspect -o json | awk -F'"' '/"providerID":/ {id = $4} /"state":/ && id != "" {print id, $4; id = ""}'; }

before=$(states | cut -d' ' -f1 | tr '\n' ' ')

echo
echo "== scale-up: inspect --scale-up $group=1 (NodeGroupIncreaseSize, as CA sends it)"
inspect --scale-up "$group=1"

echo
echo "== waiting until the new node runs (the fake cloud lists it, then boots it; at most ${WAIT}s)"
start=$SECONDS
deadline=$((start + WAIT))
last=""
while :; do
  if ! now=$(states); then
    echo "demo: inspect failed while waiting for the new node (server log: $LOG)" >&2
    exit 1
  fi
  # Instances the group did not have before the scale-up.
  new=$(awk -v old=" $before " 'index(old, " " $1 " ") == 0' <<<"$now")
  seen=${new:-not listed by the cloud yet (CA counts it as upcoming)}
  if [[ "$seen" != "$last" ]]; then
    while IFS= read -r line; do echo "  after $((SECONDS - start))s: $line"; done <<<"$seen"
    last=$seen
  fi
  grep -q ' running$' <<<"$new" && break
  if ((SECONDS >= deadline)); then
    inspect || true
    echo "demo: the new node is not running after ${WAIT}s (last seen: ${seen//$'\n'/, }; server log: $LOG)" >&2
    exit 1
  fi
  sleep 0.5
done
echo "== the new node runs, $((SECONDS - start))s after the scale-up"
inspect

# An older node goes, as when CA replaces one it finds unneeded.
victim=$(awk -v old=" $before " 'index(old, " " $1 " ") > 0 && $2 == "running" {print $1; exit}' <<<"$now")
if [[ -z "$victim" ]]; then echo "demo: no older running node to delete" >&2; exit 1; fi
echo
echo "== deletion: inspect --delete $victim (NodeGroupForNode, then NodeGroupDeleteNodes)"
inspect --delete "$victim"

echo
echo "== done; the demo server has stopped (its log: $LOG)."
echo "To explore on your own: $BIN --cloud-provider=$PROVIDER --simulate, then $BIN inspect in another terminal."
