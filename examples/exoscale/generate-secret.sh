#!/usr/bin/env bash
# Creates or updates the Secret the Exoscale provider reads its API key
# from (exoscale-credentials, keys api-key and api-secret), taking them from
# the environment:
#
#   export EXOSCALE_API_KEY=EXO... EXOSCALE_API_SECRET=...
#   ./generate-secret.sh               # namespace kube-system
#   NAMESPACE=autoscaler ./generate-secret.sh
#
# The values never appear in a file, in the process list (they reach kubectl
# through pipes, not an argument) or on the terminal.
set -euo pipefail

NAMESPACE="${NAMESPACE:-kube-system}"
SECRET_NAME="exoscale-credentials"

missing=()
for v in EXOSCALE_API_KEY EXOSCALE_API_SECRET; do
  if [ -z "${!v:-}" ]; then missing+=("$v"); fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "error: set ${missing[*]} first" >&2
  exit 1
fi

# create --dry-run | apply makes the script idempotent (it also rotates).
kubectl create secret generic "$SECRET_NAME" --namespace "$NAMESPACE" \
  --from-file=api-key=<(printf '%s' "$EXOSCALE_API_KEY") \
  --from-file=api-secret=<(printf '%s' "$EXOSCALE_API_SECRET") \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null

echo "Secret $NAMESPACE/$SECRET_NAME is up to date"
