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
# through pipes, not an argument) or on the terminal: ../generate-secret.sh,
# shared by every provider, makes the Secret.
exec bash "$(dirname "$0")/../generate-secret.sh" exoscale \
  api-key=EXOSCALE_API_KEY api-secret=EXOSCALE_API_SECRET
