#!/usr/bin/env bash
# Creates or updates the Secret the Exoscale provider reads its API key and
# zone from: exoscale-api-credentials, keys api-key, api-secret and
# api-zone, the Secret and keys of the in-tree provider's example, from the
# same variables:
#
#   export EXOSCALE_API_KEY=EXO... EXOSCALE_API_SECRET=... EXOSCALE_ZONE=ch-gva-2
#   ./generate-secret.sh               # namespace kube-system
#   NAMESPACE=autoscaler ./generate-secret.sh
#
# The values never appear in a file, in the process list (they reach kubectl
# through pipes, not an argument) or on the terminal: ../generate-secret.sh,
# shared by every provider, makes the Secret.
exec bash "$(dirname "$0")/../generate-secret.sh" exoscale-api-credentials \
  api-key=EXOSCALE_API_KEY api-secret=EXOSCALE_API_SECRET api-zone=EXOSCALE_ZONE
