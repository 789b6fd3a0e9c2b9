#!/usr/bin/env bash
# Creates (or updates) the Secret the provider reads its Exoscale credentials
# from, taking the values from the environment so they never land in a file
# or in shell history:
#
#   export EXOSCALE_API_KEY=EXO... EXOSCALE_API_SECRET=... EXOSCALE_ZONE=ch-gva-2
#   ./generate-secret.sh            # namespace kube-system
#   NAMESPACE=autoscaler ./generate-secret.sh
set -euo pipefail

NAMESPACE="${NAMESPACE:-kube-system}"
SECRET_NAME="${SECRET_NAME:-exoscale-api-credentials}"

missing=()
for v in EXOSCALE_API_KEY EXOSCALE_API_SECRET EXOSCALE_ZONE; do
  if [ -z "${!v:-}" ]; then missing+=("$v"); fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "error: set ${missing[*]} first" >&2
  exit 1
fi

# --dry-run=client | apply makes the script idempotent; --from-literal keeps the
# values out of any file, and kubectl does not echo them.
kubectl create secret generic "$SECRET_NAME" \
  --namespace "$NAMESPACE" \
  --from-literal=api-key="$EXOSCALE_API_KEY" \
  --from-literal=api-secret="$EXOSCALE_API_SECRET" \
  --from-literal=api-zone="$EXOSCALE_ZONE" \
  --dry-run=client -o yaml | kubectl apply -f -

echo "Secret $NAMESPACE/$SECRET_NAME is up to date"
