#!/usr/bin/env bash
# Creates or updates the Secret the Vultr provider reads its API key from
# (vultr-credentials, key api-key), taking the key from the environment:
#
#   export VULTR_API_KEY=...           # e.g. read -rs VULTR_API_KEY; export VULTR_API_KEY
#   ./generate-secret.sh               # namespace kube-system
#   NAMESPACE=autoscaler ./generate-secret.sh
#
# The key never appears in a file, in the process list (it reaches kubectl
# through a pipe, not an argument) or on the terminal: ../generate-secret.sh,
# shared by every provider, makes the Secret.
exec bash "$(dirname "$0")/../generate-secret.sh" vultr api-key=VULTR_API_KEY
