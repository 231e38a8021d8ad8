#!/usr/bin/env bash
# Runs the project's kubectl (built by build-kubernetes.sh) against the local cluster, as admin
# unless told otherwise: scripts/kubectl.sh --context ci-job get pods.
# With --print-path as the only argument it prints the kubectl binary's path instead.
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"
# shellcheck source=cluster/common.sh
source "$scripts/cluster/common.sh"

kubectl="$("$scripts/build-kubernetes.sh")/kubectl"
if [ "$#" -eq 1 ] && [ "$1" = --print-path ]; then
  echo "$kubectl"
  exit 0
fi
# The cluster's kubeconfig comes first, so a --kubeconfig given by the caller still wins.
exec "$kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"
