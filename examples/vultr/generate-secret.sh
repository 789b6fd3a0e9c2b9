#!/usr/bin/env bash
# Creates or updates the Secret the Vultr provider reads its API key from
# (vultr-credentials, key api-key), taking the key from the environment:
#
#   export VULTR_API_KEY=...           # e.g. read -rs VULTR_API_KEY; export VULTR_API_KEY
#   ./generate-secret.sh               # namespace kube-system
#   NAMESPACE=autoscaler ./generate-secret.sh
#
# The key never appears in a file, in the process list (it reaches kubectl
# through a pipe, not an argument) or on the terminal.
set -euo pipefail

NAMESPACE="${NAMESPACE:-kube-system}"
SECRET_NAME="vultr-credentials"

missing=()
for v in VULTR_API_KEY; do
  if [ -z "${!v:-}" ]; then missing+=("$v"); fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "error: set ${missing[*]} first" >&2
  exit 1
fi

# create --dry-run | apply makes the script idempotent (it also rotates).
kubectl create secret generic "$SECRET_NAME" --namespace "$NAMESPACE" \
  --from-file=api-key=<(printf '%s' "$VULTR_API_KEY") \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null

echo "Secret $NAMESPACE/$SECRET_NAME is up to date"
