#!/usr/bin/env bash
# Creates or updates the Secret the Volcengine provider reads its keys from
# (volcengine-credentials, keys access-key and secret-key), taking them from
# the environment:
#
#   export VOLCENGINE_ACCESS_KEY=AKLT... VOLCENGINE_SECRET_KEY=...
#   ./generate-secret.sh               # namespace kube-system
#   NAMESPACE=autoscaler ./generate-secret.sh
#
# The keys never appear in a file, in the process list (they reach kubectl
# through pipes, not an argument) or on the terminal.
set -euo pipefail

NAMESPACE="${NAMESPACE:-kube-system}"
SECRET_NAME="volcengine-credentials"

missing=()
for v in VOLCENGINE_ACCESS_KEY VOLCENGINE_SECRET_KEY; do
  if [ -z "${!v:-}" ]; then missing+=("$v"); fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "error: set ${missing[*]} first" >&2
  exit 1
fi

# create --dry-run | apply makes the script idempotent (it also rotates).
kubectl create secret generic "$SECRET_NAME" --namespace "$NAMESPACE" \
  --from-file=access-key=<(printf '%s' "$VOLCENGINE_ACCESS_KEY") \
  --from-file=secret-key=<(printf '%s' "$VOLCENGINE_SECRET_KEY") \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null

echo "Secret $NAMESPACE/$SECRET_NAME is up to date"
