#!/usr/bin/env bash
# Creates or updates a provider's credentials Secret from environment
# variables. Each examples/<provider>/generate-secret.sh runs it with the
# Secret name and keys of the in-tree provider's example, so every
# provider's Secret is made the same way:
#
#   generate-secret.sh <secret name> <key>=<VARIABLE>[|<ALIAS>...]...
#
# makes the Secret <secret name> in $NAMESPACE (default kube-system), key
# <key> holding the value of $VARIABLE, or of the first alias that is set,
# after checking that every key has a value. The values never appear in a
# file, in the process list (each reaches kubectl through its own pipe, not
# an argument) or on the terminal.
set -euo pipefail

if [ "$#" -lt 2 ]; then
  echo "usage: $0 <secret name> <key>=<VARIABLE>[|<ALIAS>...]..." >&2
  exit 2
fi
SECRET_NAME=$1
shift
pairs=("$@")

NAMESPACE="${NAMESPACE:-kube-system}"

if [[ ! "$SECRET_NAME" =~ ^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$ ]]; then
  echo "error: secret name $SECRET_NAME is not a Kubernetes name" >&2
  exit 2
fi

# vars[i] is the variable that gives key i its value.
vars=()
missing=()
for pair in "${pairs[@]}"; do
  # Variable names are checked before ${!v} reads them, as bash would expand
  # anything else given there.
  if [[ ! "$pair" =~ ^[a-z0-9.-]+=[A-Za-z_][A-Za-z0-9_]*(\|[A-Za-z_][A-Za-z0-9_]*)*$ ]]; then
    echo "error: $pair is not <key>=<VARIABLE>[|<ALIAS>...]" >&2
    exit 2
  fi
  names=${pair#*=}
  found=""
  IFS='|' read -r -a candidates <<<"$names"
  for v in "${candidates[@]}"; do
    if [ -n "${!v:-}" ]; then
      found=$v
      break
    fi
  done
  if [ -z "$found" ]; then
    what=${candidates[0]}
    if [ "${#candidates[@]}" -gt 1 ]; then
      aliases=("${candidates[@]:1}")
      what="$what (or ${aliases[*]})"
    fi
    missing+=("$what")
  fi
  vars+=("$found")
done
if [ "${#missing[@]}" -gt 0 ]; then
  list=${missing[0]}
  for m in "${missing[@]:1}"; do list="$list, $m"; done
  echo "error: set $list first" >&2
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
  local key=${pairs[$i]%%=*} v=${vars[$i]}
  secret_yaml $((i + 1)) "$@" --from-file="$key"=<(printf '%s' "${!v}")
}

# create --dry-run | apply makes the script idempotent (it also rotates).
secret_yaml 0 | kubectl apply -f - >/dev/null

echo "Secret $NAMESPACE/$SECRET_NAME is up to date"
