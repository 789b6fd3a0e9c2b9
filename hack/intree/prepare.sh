#!/usr/bin/env bash
# prepare.sh CA_SRC OUT [CA_CORE_SRC]: copies the Cluster Autoscaler tree
# CA_SRC to OUT and wires this repository's providers into the copy:
# router_<p>.go of vultr, volcengine and exoscale imports our package
# instead of upstream's (CA registers a name once), and the copy's go.mod
# requires this repository's modules from the working tree. CA_SRC is left
# as it was.
#
# Two generations of tree are told apart by their go.mod:
#   - 1.36: the core is in k8s.io/autoscaler/cluster-autoscaler itself;
#     intree/ builds as it is.
#   - split core: go.mod requires sigs.k8s.io/cluster-autoscaler, which
#     holds the core under pkg/. intree/ is rewritten for it into
#     OUT/../intree-split (hack/intree/splitcore: import paths only). The
#     core comes from the module proxy, or from CA_CORE_SRC (a
#     kubernetes-sigs/cluster-autoscaler checkout) when the proxy lacks it.
# OUT.env records the generation and the in-tree module to test.
set -euo pipefail

src=${1:-}
out=${2:-_out/ca-src}
core_src=${3:-${CA_CORE_SRC:-}}
root=$(cd "$(dirname "$0")/../.." && pwd)
core_mod=sigs.k8s.io/cluster-autoscaler

fail() {
	echo "error: $*" >&2
	exit 2
}

if [ -z "$src" ]; then
	fail "CA_SRC is required: the cluster-autoscaler directory of a kubernetes/autoscaler checkout (1.36 or newer, or master with the split core), e.g. make ca CA_SRC=\$HOME/autoscaler/cluster-autoscaler"
fi
if ! grep -qx 'module k8s.io/autoscaler/cluster-autoscaler' "$src/go.mod" 2>/dev/null; then
	fail "CA_SRC=$src is not a cluster-autoscaler tree (no go.mod of module k8s.io/autoscaler/cluster-autoscaler): give the cluster-autoscaler directory of a kubernetes/autoscaler checkout (1.36 or newer)"
fi
for p in vultr volcengine exoscale; do
	if [ ! -f "$src/cloudprovider/router/router_$p.go" ]; then
		fail "CA_SRC=$src has no cloudprovider/router/router_$p.go: in-tree registration needs Cluster Autoscaler 1.36 or newer"
	fi
done

# The core version the tree requires, if it is a split-core tree.
core_info=$(cd "$root" && go run ./hack/intree/splitcore -core -ca "$(cd "$src" && pwd)")
core_version=$(sed -n 1p <<<"$core_info")
core_replace=$(sed -n 2p <<<"$core_info")
if [ -n "$core_version" ]; then
	generation=split-core
elif [ -f "$src/cloudprovider/cloud_provider.go" ]; then
	generation=1.36
else
	fail "CA_SRC=$src is neither generation: want cloudprovider/cloud_provider.go in the tree (CA 1.36) or a go.mod requiring $core_mod (the split core, CA master)"
fi

if [ "$generation" = split-core ]; then
	if [ -n "$core_src" ]; then
		if ! grep -qx "module $core_mod" "$core_src/go.mod" 2>/dev/null; then
			fail "CA_CORE_SRC=$core_src is not a $core_mod checkout (no go.mod of module $core_mod): give the directory of kubernetes-sigs/cluster-autoscaler at the version CA_SRC requires ($core_version)"
		fi
		core_from="CA_CORE_SRC=$core_src"
	elif [ -n "$core_replace" ]; then
		core_from="CA_SRC's own replace directive"
	elif (cd / && GOFLAGS='' go mod download "$core_mod@$core_version") >/dev/null 2>&1; then
		core_from="the module proxy"
	else
		fail "CA_SRC=$src is a split-core tree and $core_mod@$core_version cannot be downloaded here: give CA_CORE_SRC=<a kubernetes-sigs/cluster-autoscaler checkout at that version>"
	fi
	echo "CA_SRC=$src: split-core Cluster Autoscaler (core $core_mod $core_version from $core_from)"
else
	echo "CA_SRC=$src: Cluster Autoscaler 1.36 generation (core in k8s.io/autoscaler/cluster-autoscaler)"
fi

# Absolute paths: the wiring below runs inside the copy.
src=$(cd "$src" && pwd)
if [ -n "$core_src" ]; then core_src=$(cd "$core_src" && pwd); fi
rm -rf "$out"
mkdir -p "$(dirname "$out")"
cp -a "$src" "$out"
rm -rf "$out/.git"
outdir=$(cd "$(dirname "$out")" && pwd)
intree_dir="$root/intree"
if [ "$generation" = split-core ]; then
	intree_dir="$outdir/intree-split"
fi

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
# Relative paths: the binary's build info records them, and an image built
# from another checkout of the same commit must not differ.
rel=$(realpath --relative-to="$PWD" "$root")
rel_intree=$(realpath --relative-to="$PWD" "$intree_dir")
go mod edit \
	-require=github.com/ca-providers/cluster-autoscaler-provider@v0.0.0 \
	-require=github.com/ca-providers/cluster-autoscaler-provider/intree@v0.0.0 \
	-replace=github.com/ca-providers/cluster-autoscaler-provider="$rel" \
	-replace=github.com/ca-providers/cluster-autoscaler-provider/intree="$rel_intree"
if [ "$generation" = split-core ]; then
	if [ -n "$core_src" ]; then
		rm -rf "$outdir/ca-core"
		cp -a "$core_src" "$outdir/ca-core"
		rm -rf "$outdir/ca-core/.git"
		go mod edit -replace="$core_mod=$(realpath --relative-to="$PWD" "$outdir/ca-core")"
	elif [ -n "$core_replace" ]; then
		# A local path in CA_SRC's replace is relative to CA_SRC.
		if [[ "$core_replace" == .* ]]; then
			go mod edit -replace="$core_mod=$(realpath --relative-to="$PWD" "$src/$core_replace")"
		fi
	fi
	(cd "$root" && go run ./hack/intree/splitcore -src intree -ca "$outdir/$(basename "$out")" -out "$intree_dir" -root .)
fi
# The requirements our modules add (grpc, client_golang, the clouds' SDKs)
# go into the copy's go.mod and go.sum.
GOFLAGS=-mod=mod go list -deps -tags 'vultr volcengine exoscale' . >/dev/null
if [ "$generation" = split-core ]; then
	# The rewritten module's tests: its requirements at the CA tree's versions.
	cp go.sum "$intree_dir/go.sum"
	(cd "$intree_dir" && GOFLAGS=-mod=mod go mod tidy)
fi
printf 'CA_GENERATION=%s\nCA_INTREE=%s\n' "$generation" "$(realpath --relative-to="$root" "$intree_dir")" >"$outdir/$(basename "$out").env"
echo "prepared $out from $src ($generation) with our vultr, volcengine and exoscale providers"
