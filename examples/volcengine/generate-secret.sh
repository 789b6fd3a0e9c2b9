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
# through pipes, not an argument) or on the terminal: ../generate-secret.sh,
# shared by every provider, makes the Secret.
exec bash "$(dirname "$0")/../generate-secret.sh" volcengine \
  access-key=VOLCENGINE_ACCESS_KEY secret-key=VOLCENGINE_SECRET_KEY
