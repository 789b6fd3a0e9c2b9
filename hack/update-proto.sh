#!/usr/bin/env bash
# Regenerates the Go code of our externalgrpc proto. protoc comes from Debian's
# protobuf-compiler; the Go plugins are pinned here and built through the module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.0
OUT=${1:-.}

command -v protoc >/dev/null || { echo "protoc not found: apt-get install -y protobuf-compiler" >&2; exit 1; }
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
GOBIN=$BIN GOFLAGS=-mod=mod go install "google.golang.org/protobuf/cmd/protoc-gen-go@${PROTOC_GEN_GO_VERSION}"
GOBIN=$BIN GOFLAGS=-mod=mod go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@${PROTOC_GEN_GO_GRPC_VERSION}"

DIR=cloudprovider/externalgrpc/protos
mkdir -p "$OUT/$DIR"
PATH="$BIN:$PATH" protoc -I "$DIR" -I /usr/include \
  --go_out="$OUT/$DIR" --go_opt=paths=source_relative \
  --go-grpc_out="$OUT/$DIR" --go-grpc_opt=paths=source_relative \
  "$DIR/externalgrpc.proto"

# Test-only: the field layout of CA 1.34.1 and older (messages only; its
# client in the same package calls upstream's method paths).
LEGACY=cloudprovider/externalgrpc/grpctest/legacyca
mkdir -p "$OUT/$LEGACY"
PATH="$BIN:$PATH" protoc -I "$LEGACY" -I /usr/include \
  --go_out="$OUT/$LEGACY" --go_opt=paths=source_relative \
  "$LEGACY/legacyca.proto"
