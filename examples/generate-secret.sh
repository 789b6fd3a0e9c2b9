#!/usr/bin/env bash
# Creates or updates a provider's credentials Secret from environment
# variables. Each examples/<provider>/generate-secret.sh runs it with its
# provider and keys, so every provider's Secret is made the same way:
#
#   generate-secret.sh <provider> <key>=<VARIABLE>...
#
# makes the Secret <provider>-credentials in $NAMESPACE (default
# kube-system), key <key> holding the value of $VARIABLE, after checking
# that every variable is set. The values never appear in a file, in the
# process list (each reaches kubectl through its own pipe, not an argument)
# or on the terminal.
set -euo pipefail

if [ "$#" -lt 2 ]; then
  echo "usage: $0 <provider> <key>=<VARIABLE>..." >&2
  exit 2
fi
provider=$1
shift
pairs=("$@")

NAMESPACE="${NAMESPACE:-kube-system}"
SECRET_NAME="$provider-credentials"

missing=()
for pair in "${pairs[@]}"; do
  v=${pair#*=}
  # A variable name is checked before ${!v} reads it, as bash would expand
  # anything else given there.
  if [[ ! "$pair" =~ ^[a-z0-9.-]+=[A-Za-z_][A-Za-z0-9_]*$ ]]; then
    echo "error: $pair is not <key>=<VARIABLE>" >&2
    exit 2
  fi
  if [ -z "${!v:-}" ]; then missing+=("$v"); fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "error: set ${missing[*]} first" >&2
  exit 1
fi

# secret_yaml prints the Secret kubectl would create, with one --from-file
# per key from pairs[$1] on: each call adds its key's pipe and calls the next,
# so every pipe stays open until kubectl has read it.
secret_yaml() {
  local i=$1
  shift
  if [ "$i" -ge "${#pairs[@]}" ]; then
    kubectl create secret generic "$SECRET_NAME" --namespace "$NAMESPACE" "$@" \
      --dry-run=client -o yaml
    return
  fi
  local key=${pairs[$i]%%=*} v=${pairs[$i]#*=}
  secret_yaml $((i + 1)) "$@" --from-file="$key"=<(printf '%s' "${!v}")
}

# create --dry-run | apply makes the script idempotent (it also rotates).
secret_yaml 0 | kubectl apply -f - >/dev/null

echo "Secret $NAMESPACE/$SECRET_NAME is up to date"
