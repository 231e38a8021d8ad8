#!/usr/bin/env bash
# `make demo`: a review app's life with the real CLI, on the local cluster, the way the pipeline of
# examples/gitlab-ci/ runs it: plan in the merge request, apply on deploy, a commit that changes
# one value and whose plan shows exactly that line, and destroy from the deploy job's artifacts once
# the branch is gone, after which the namespace no longer exists.
#
# It starts what it needs and stops what it started: the local cluster (left running when it was
# already up), a GitLab-style Terraform state server (internal/gitlabstate) and the provider built
# from this checkout, installed from a filesystem mirror as `init` installs it from the registry.
# Uses terraform from PATH, else OpenTofu built from source (scripts/ensure-terraform.sh).
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"
# shellcheck source=cluster/common.sh
source "$scripts/cluster/common.sh"
cd "$REPO_ROOT"

if [ -t 1 ]; then bold=$'\033[1m' dim=$'\033[2m' reset=$'\033[0m'; else bold="" dim="" reset=""; fi
step=0
heading() {
  step=$((step + 1))
  printf '\n%s== %d. %s%s\n' "$bold" "$step" "$*" "$reset"
}
say() { printf '%s\n' "$*"; }
# run prints a command the way a GitLab job log does, then runs it.
run() {
  printf '%s$ %s%s\n' "$dim" "$*" "$reset"
  "$@"
}

work="$(mktemp -d)"
state_pid=""
started_cluster=""
cleanup() {
  local status=$?
  [ -n "$state_pid" ] && kill "$state_pid" 2>/dev/null && wait "$state_pid" 2>/dev/null
  [ -n "$started_cluster" ] && "$scripts/cluster-down.sh"
  rm -rf "$work"
  [ "$status" -eq 0 ] || say "demo failed (exit $status)" >&2
}
trap cleanup EXIT

command -v jq >/dev/null || { say "the demo needs jq, as the pipeline's jobs do: apt-get install jq" >&2; exit 1; }
tf="$("$scripts/ensure-terraform.sh")"
tfname="$(basename "$tf")"

heading "A Kubernetes cluster"
if cluster_running; then
  say "Using the local cluster already running at $APISERVER_URL."
else
  say "Starting a local cluster: etcd, kube-apiserver, controller manager and scheduler, kwok for nodes."
  "$scripts/cluster-up.sh"
  started_cluster=1
fi

heading "The provider, installed the way 'init' installs it from the registry"
TF_CLI_CONFIG_FILE="$(PROVIDER_VERSION=0.0.1 "$scripts/provider-mirror.sh" "$work/mirror")"
export TF_CLI_CONFIG_FILE
say "Built into a filesystem mirror; CLI configuration: $TF_CLI_CONFIG_FILE"

heading "GitLab's Terraform state, one state per environment"
go build -o "$work/gitlabstate" ./internal/gitlabstate/cmd/gitlabstate
"$work/gitlabstate" -project-id 1 -env-file "$work/state.env" 2>"$work/state.log" &
state_pid=$!
deadline=$((SECONDS + 30))
until [ -s "$work/state.env" ]; do
  kill -0 "$state_pid" 2>/dev/null || { cat "$work/state.log" >&2; exit 1; }
  [ "$SECONDS" -lt "$deadline" ] || { say "the state server did not start" >&2; exit 1; }
  sleep 0.2
done
# shellcheck disable=SC1091
source "$work/state.env"
say "State API at $CI_API_V4_URL (a stand-in for GitLab's, for this demo only)."

# What a merge request pipeline's job has: predefined variables and the project's CI/CD variables.
export CI_PROJECT_PATH_SLUG=demo-app CI_COMMIT_REF_SLUG=my-feature
export CI_ENVIRONMENT_NAME="review/$CI_COMMIT_REF_SLUG"
export TF_STATE_NAME="review-$CI_COMMIT_REF_SLUG"
export KUBECONFIG="$KUBECONFIG_FILE" TF_VAR_kube_context=admin
export TF_VAR_environment_name="$CI_ENVIRONMENT_NAME"
export TF_HTTP_PASSWORD="$CI_JOB_TOKEN" TF_IN_AUTOMATION=true TF_INPUT=false CHECKPOINT_DISABLE=1
# A masked CI/CD variable in a real project; it lands in a Secret and never shows in a plan.
TF_VAR_api_key="demo-secret-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
export TF_VAR_api_key
TF_ADDRESS="$CI_API_V4_URL/projects/$CI_PROJECT_ID/terraform/state/$TF_STATE_NAME"

# init is the before_script of every job in examples/gitlab-ci/.gitlab-ci.yml.
# Its output is cut to the lines that show where the provider came from.
init() {
  local args=(init -input=false
    -backend-config="address=$TF_ADDRESS"
    -backend-config="lock_address=$TF_ADDRESS/lock"
    -backend-config="unlock_address=$TF_ADDRESS/lock"
    -backend-config="lock_method=POST"
    -backend-config="unlock_method=DELETE"
    -backend-config="username=gitlab-ci-token")
  printf '%s$ %s %s%s\n' "$dim" "$tfname" "${args[*]}" "$reset"
  "$tfname" "${args[@]}" >"$work/init.log" 2>&1 || { cat "$work/init.log"; return 1; }
  grep -E '^- (Installing|Installed)' "$work/init.log" || true
}
# The merge-request widget's summary, as the plan job computes it.
widget_report() {
  "$tfname" show -json plan.cache | jq -c '([.resource_changes[]?.change.actions?] | flatten)
    | {"create": (map(select(. == "create")) | length),
       "update": (map(select(. == "update")) | length),
       "delete": (map(select(. == "delete")) | length)}'
}
PATH="$(dirname "$tf"):$PATH"

repo="$work/repo"
cp -r examples/gitlab-ci "$repo"
cd "$repo"

heading "Merge request pipeline, job 'plan': every object the release will create"
init
run "$tfname" plan -input=false -out=plan.cache | tee "$work/plan.log"
say "Merge request widget: $(widget_report)"
leaks="$(grep -cF "$TF_VAR_api_key" "$work/plan.log" || true)"
say "The api_key appears $leaks times in the plan; its Secret shows a hash:"
grep -F 'API_KEY:' "$work/plan.log" || true
[ "$leaks" -eq 0 ]

heading "Job 'deploy_review': apply exactly that plan"
run "$tfname" apply -input=false plan.cache
namespace="$("$tfname" output -raw namespace)"
run "$scripts/kubectl.sh" --namespace "$namespace" get deployments,services,configmaps,secrets

heading "A new commit changes one value"
cp values.yaml "$work/values.before"
sed -i 's/^message: .*/message: "Hello from the second commit"/' values.yaml
diff -u --label a/values.yaml --label b/values.yaml "$work/values.before" values.yaml || true

heading "Its plan: one object, one changed line"
run "$tfname" plan -input=false -out=plan.cache
say "Merge request widget: $(widget_report)"

heading "Deploy it"
run "$tfname" apply -input=false plan.cache
run "$scripts/kubectl.sh" --namespace "$namespace" get configmap app-content -o jsonpath='{.data.index\.html}'

heading "Merged: the branch is gone, GitLab runs 'stop_review' on the deploy job's artifacts"
artifacts="$work/stop_review"
mkdir -p "$artifacts"
cp -r ./*.tf .terraform.lock.hcl values.yaml chart "$artifacts/"
cd "$artifacts"
rm -rf "$repo"
say "The job's folder holds only the artifacts: $(find . -mindepth 1 -maxdepth 1 -printf '%f ')"
init
run "$tfname" destroy -input=false -auto-approve

heading "The namespace is gone, and so is everything in the state"
if "$scripts/kubectl.sh" get namespace "$namespace" >/dev/null 2>&1; then
  say "namespace $namespace still exists" >&2
  exit 1
fi
run "$scripts/kubectl.sh" get namespace "$namespace" || true
resources="$(curl -fsS -u "gitlab-ci-token:$CI_JOB_TOKEN" "$TF_ADDRESS" | jq '.resources | length')"
say "State $TF_STATE_NAME holds $resources resources."
[ "$resources" -eq 0 ]

printf '\n%sDone.%s The same jobs run in GitLab CI: see examples/gitlab-ci/.gitlab-ci.yml.\n' "$bold" "$reset"
