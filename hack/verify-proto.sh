#!/usr/bin/env bash
# Fails when the checked-in generated code differs from what update-proto.sh makes.
set -euo pipefail
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
hack/update-proto.sh "$TMP"
DIR=cloudprovider/externalgrpc/protos
for f in externalgrpc.pb.go externalgrpc_grpc.pb.go; do
  if ! diff -u "$DIR/$f" "$TMP/$DIR/$f"; then
    echo "$DIR/$f is stale: run hack/update-proto.sh (make proto)" >&2
    exit 1
  fi
done
echo "generated proto code is up to date"
