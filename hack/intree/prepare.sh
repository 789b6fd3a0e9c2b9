#!/usr/bin/env bash
# prepare.sh CA_SRC OUT: copies the Cluster Autoscaler tree CA_SRC to OUT
# and wires this repository's providers into the copy: router_<p>.go of
# vultr, volcengine and exoscale imports our package instead of upstream's
# (CA registers a name once), and the copy's go.mod requires this
# repository's modules from the working tree. CA_SRC is left as it was.
set -euo pipefail

src=${1:-}
out=${2:-_out/ca-src}
root=$(cd "$(dirname "$0")/../.." && pwd)

if [ -z "$src" ]; then
	echo "error: CA_SRC is required: the cluster-autoscaler directory of a kubernetes/autoscaler checkout (1.36 or newer), e.g. make ca CA_SRC=\$HOME/autoscaler/cluster-autoscaler" >&2
	exit 2
fi
if ! grep -qx 'module k8s.io/autoscaler/cluster-autoscaler' "$src/go.mod" 2>/dev/null; then
	echo "error: CA_SRC=$src is not a cluster-autoscaler tree (no go.mod of module k8s.io/autoscaler/cluster-autoscaler): give the cluster-autoscaler directory of a kubernetes/autoscaler checkout" >&2
	exit 2
fi
for p in vultr volcengine exoscale; do
	if [ ! -f "$src/cloudprovider/router/router_$p.go" ]; then
		echo "error: CA_SRC=$src has no cloudprovider/router/router_$p.go: in-tree registration needs Cluster Autoscaler 1.36 or newer" >&2
		exit 2
	fi
done

rm -rf "$out"
mkdir -p "$(dirname "$out")"
cp -a "$src" "$out"
rm -rf "$out/.git"

for p in vultr volcengine exoscale; do
	cat >"$out/cloudprovider/router/router_$p.go" <<GO
//go:build $p

package router

// The $p provider of github.com/ca-providers/cluster-autoscaler-provider,
// registered as --cloud-provider=$p in place of upstream's.
import _ "github.com/ca-providers/cluster-autoscaler-provider/intree/$p"
GO
done

cd "$out"
# A relative path: the binary's build info records it, and an image built
# from another checkout of the same commit must not differ.
rel=$(realpath --relative-to="$PWD" "$root")
go mod edit \
	-require=github.com/ca-providers/cluster-autoscaler-provider@v0.0.0 \
	-require=github.com/ca-providers/cluster-autoscaler-provider/intree@v0.0.0 \
	-replace=github.com/ca-providers/cluster-autoscaler-provider="$rel" \
	-replace=github.com/ca-providers/cluster-autoscaler-provider/intree="$rel/intree"
# The requirements our modules add (grpc, client_golang, the clouds' SDKs)
# go into the copy's go.mod and go.sum.
GOFLAGS=-mod=mod go list -deps -tags 'vultr volcengine exoscale' . >/dev/null
echo "prepared $out from $src with our vultr, volcengine and exoscale providers"
