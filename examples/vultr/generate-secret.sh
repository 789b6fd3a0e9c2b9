#!/usr/bin/env bash
# Creates or updates the Secret the Vultr provider reads its configuration
# from: cluster-autoscaler-cloud-config, key cloud-config holding
# {"cluster_id": ..., "token": ...}, the Secret, key and JSON of the in-tree
# provider's example, from the environment:
#
#   export VULTR_API_KEY=...           # e.g. read -rs VULTR_API_KEY; export VULTR_API_KEY
#   export VULTR_CLUSTER_ID=<VKE cluster id>
#   ./generate-secret.sh               # namespace kube-system
#   NAMESPACE=autoscaler ./generate-secret.sh
#
# The key never appears in a file, in the process list (the JSON is built by
# bash itself and reaches kubectl through a pipe, not an argument) or on the
# terminal: ../generate-secret.sh, shared by every provider, makes the Secret.
set -euo pipefail

missing=()
for v in VULTR_API_KEY VULTR_CLUSTER_ID; do
  if [ -z "${!v:-}" ]; then missing+=("$v"); fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "error: set ${missing[*]} first" >&2
  exit 1
fi

# json_string quotes $1 as a JSON string; control characters are refused.
json_string() {
  local s=$1
  if [[ "$s" =~ [[:cntrl:]] ]]; then
    return 1
  fi
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}
if ! token=$(json_string "$VULTR_API_KEY"); then
  echo "error: VULTR_API_KEY holds a control character (a pasted newline?); set it to the key alone" >&2
  exit 2
fi
if ! cluster=$(json_string "$VULTR_CLUSTER_ID"); then
  echo "error: VULTR_CLUSTER_ID holds a control character; set it to the VKE cluster id alone" >&2
  exit 2
fi
export VULTR_CLOUD_CONFIG="{\"cluster_id\": $cluster, \"token\": $token}"
exec bash "$(dirname "$0")/../generate-secret.sh" cluster-autoscaler-cloud-config \
  cloud-config=VULTR_CLOUD_CONFIG
