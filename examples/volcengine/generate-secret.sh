#!/usr/bin/env bash
# Creates or updates the Secret the Volcengine provider reads its keys and
# region from: cloud-config, keys access-key, secret-key, region-id and
# endpoint, the Secret and keys of the in-tree provider's example, from the
# variables the in-tree provider reads (VOLCENGINE_ACCESS_KEY and
# VOLCENGINE_SECRET_KEY are accepted too):
#
#   export ACCESS_KEY=AKLT... SECRET_KEY=... REGION_ID=cn-beijing
#   export ENDPOINT=open.ap-southeast-1.byteplusapi.com   # optional
#   ./generate-secret.sh               # namespace kube-system
#   NAMESPACE=autoscaler ./generate-secret.sh
#
# The keys never appear in a file, in the process list (they reach kubectl
# through pipes, not an argument) or on the terminal: ../generate-secret.sh,
# shared by every provider, makes the Secret.
# The in-tree example Deployment requires the endpoint key; this is its default.
export ENDPOINT="${ENDPOINT:-open.volcengineapi.com}"
exec bash "$(dirname "$0")/../generate-secret.sh" cloud-config \
  "access-key=ACCESS_KEY|VOLCENGINE_ACCESS_KEY" "secret-key=SECRET_KEY|VOLCENGINE_SECRET_KEY" \
  region-id=REGION_ID endpoint=ENDPOINT
