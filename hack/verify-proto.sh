#!/usr/bin/env bash
# Fails when the checked-in generated code differs from what update-proto.sh makes.
set -euo pipefail
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
hack/update-proto.sh "$TMP"
for f in cloudprovider/externalgrpc/protos/externalgrpc.pb.go \
         cloudprovider/externalgrpc/protos/externalgrpc_grpc.pb.go \
         cloudprovider/externalgrpc/grpctest/legacyca/legacyca.pb.go; do
  if ! diff -u "$f" "$TMP/$f"; then
    echo "$f is stale: run hack/update-proto.sh (make proto)" >&2
    exit 1
  fi
done
echo "generated proto code is up to date"
