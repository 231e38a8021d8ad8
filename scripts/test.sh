#!/usr/bin/env bash
# The project's test run: unit tests, then acceptance tests (TF_ACC=1) against the local cluster.
# Starts the cluster when it is not running and stops it at the end only in that case, so a
# cluster someone started by hand survives the run.
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"
# shellcheck source=cluster/common.sh
source "$scripts/cluster/common.sh"
cd "$REPO_ROOT"

# terraform-plugin-testing runs this CLI. OpenTofu refuses the default provider address, whose
# namespace is the legacy "-", so give the provider a namespace of its own; that alone is enough
# (the provider is reattached in-process, nothing is downloaded).
TF_ACC_TERRAFORM_PATH="$("$scripts/ensure-terraform.sh")"
export TF_ACC_TERRAFORM_PATH
if [ "$(basename "$TF_ACC_TERRAFORM_PATH")" = tofu ]; then
  export TF_ACC_PROVIDER_NAMESPACE="${TF_ACC_PROVIDER_NAMESPACE:-gitlabk8s}"
fi
log "acceptance tests use $TF_ACC_TERRAFORM_PATH"

# The helm CLI, for the tests that prove a release is an ordinary Helm release (helm list,
# history, rollback work on it). Cached in $GITLABK8S_BIN_DIR after the first build.
GITLABK8S_HELM="$("$scripts/build-helm.sh")"
export GITLABK8S_HELM
log "helm CLI tests use $GITLABK8S_HELM"

if cluster_running; then
  log "using the running cluster at $APISERVER_URL"
else
  "$scripts/cluster-up.sh"
  # Started here, so stopped here, whatever the tests' outcome.
  trap '"$scripts/cluster-down.sh"' EXIT
fi
export GITLABK8S_TEST_KUBECONFIG="$KUBECONFIG_FILE"

log "unit tests (race detector on)"
go test -race ./...
log "acceptance tests"
TF_ACC=1 go test -p 1 -count=1 -timeout 60m ./...
