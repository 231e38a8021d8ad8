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

# The CLIs. OpenTofu is built always (cached in $GITLABK8S_BIN_DIR, so only the first run pays),
# terraform is used when it is on PATH: the tests that drive a CLI themselves (the end-to-end
# pipelines, the killed and cancelled applies, the secrets checks) run once with each of them.
# Terraform cannot be built from source here (its module needs files the module proxy does not
# serve), so without it those runs skip, and the summary at the end lists them.
GITLABK8S_TOFU="$("$scripts/build-opentofu.sh")"
export GITLABK8S_TOFU
if GITLABK8S_TERRAFORM="$(command -v terraform)"; then
  export GITLABK8S_TERRAFORM
else
  unset GITLABK8S_TERRAFORM
  log "no terraform on PATH: the terraform runs of the CLI-driven tests will skip"
fi

# terraform-plugin-testing runs this CLI: terraform when there is one, else tofu. The provider's
# tests serve it in-process under its own namespace with either (TF_ACC_PROVIDER_NAMESPACE,
# internal/provider/provider_test.go), since OpenTofu refuses the default one.
TF_ACC_TERRAFORM_PATH="${TF_ACC_TERRAFORM_PATH:-${GITLABK8S_TERRAFORM:-$GITLABK8S_TOFU}}"
export TF_ACC_TERRAFORM_PATH
log "acceptance tests use $TF_ACC_TERRAFORM_PATH"

# gitlab-ci-local, the local runner of GitLab pipelines the end-to-end tests run the example
# pipelines with (npm; cached in $GITLABK8S_BIN_DIR after the first install).
GITLABK8S_GITLAB_CI_LOCAL="$("$scripts/install-gitlab-ci-local.sh")"
export GITLABK8S_GITLAB_CI_LOCAL
log "pipelines run with $GITLABK8S_GITLAB_CI_LOCAL"

# The helm CLI, for the tests that prove a release is an ordinary Helm release (helm list,
# history, rollback work on it). Cached in $GITLABK8S_BIN_DIR after the first build.
# Both majors: a release this provider manages is also read and changed by helm 3 and helm 4.
GITLABK8S_HELM="$("$scripts/build-helm.sh" "$HELM_VERSION")"
GITLABK8S_HELM4="$("$scripts/build-helm.sh" "$HELM4_VERSION")"
export GITLABK8S_HELM GITLABK8S_HELM4
log "helm CLI tests use $GITLABK8S_HELM and $GITLABK8S_HELM4"

# The provider runs in the test process, so its acceptance tests can run under the race detector.
# These do, and only these (under it the whole package's run takes about 70% longer, for paths
# that run no goroutines of the provider's own or Helm's): Helm's parallel deletes of a release of many objects logging with set_sensitive
# values, the plan's parallel dry runs, a readiness wait cut short by a crash loop and rolled
# back, two releases applied at once by one provider instance, and the retries of Helm's and the
# provider's goroutines sharing one transport while a tunnel resets every connection, and a destroy
# whose owners are read together before Helm's parallel deletes. Each pattern names top-level
# tests of internal/provider and must match at least one; the unit run already built the
# package with -race, so this costs their run time only.
race_tests=(
  'TestAccRelease_manyObjectsWithSensitiveValues'
  'TestAccRelease_dryRun[A-Za-z]*'
  'TestAccRelease_crashLoopFailsFastAndRollsBack'
  'TestAccRelease_hooksAndCRDs'
  'TestAccRelease_tunnelResetsEveryTwoSeconds'
  'TestAccRelease_destroyReadsOwnersAtOnce'
)
race_run="^($(IFS='|'; echo "${race_tests[*]}"))\$"

# The runs go through testsummary: plain `go test` output while they run, then per package the
# tools its tests used and every skipped test with its reason, whatever the outcome.
results="$(mktemp -d)"
cleanup() {
  "$results/testsummary" report -expected 'set TF_ACC=1' unit="$results/unit.json" acceptance="$results/acceptance.json" acceptance-race="$results/race.json" || true
  rm -rf "$results"
}
go build -o "$results/testsummary" ./scripts/testsummary

if cluster_running; then
  log "using the running cluster at $APISERVER_URL"
  trap cleanup EXIT
else
  "$scripts/cluster-up.sh"
  # Started here, so stopped here, whatever the tests' outcome.
  trap 'cleanup; "$scripts/cluster-down.sh"' EXIT
fi
export GITLABK8S_TEST_KUBECONFIG="$KUBECONFIG_FILE"

log "unit tests (race detector on)"
go test -json -race ./... | tee "$results/unit.json" | "$results/testsummary" stream
log "acceptance tests"
TF_ACC=1 go test -json -p 1 -count=1 -timeout 60m -skip "$race_run" ./... | tee "$results/acceptance.json" | "$results/testsummary" stream -tests
log "acceptance tests of the provider's concurrent paths (race detector on)"
TF_ACC=1 go test -json -race -p 1 -count=1 -timeout 20m -run "$race_run" ./internal/provider/ | tee "$results/race.json" | "$results/testsummary" stream -tests
# `go test -run` passes when nothing matches: a renamed test must not drop out unnoticed.
for pattern in "${race_tests[@]}"; do
  if ! grep -Eq "\"Action\":\"pass\",\"Package\":\"[^\"]*/internal/provider\",\"Test\":\"$pattern\"" "$results/race.json"; then
    log "no test of internal/provider matching $pattern passed under the race detector: rename it in scripts/test.sh"
    exit 1
  fi
done
